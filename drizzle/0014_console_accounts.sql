CREATE TABLE `console_accounts` (
	`id` text PRIMARY KEY NOT NULL,
	`email` text NOT NULL,
	`nombre` text,
	`password_hash` text NOT NULL,
	`totp_sealed` blob,
	`totp_pending_sealed` blob,
	`totp_last_step` integer,
	`failed_logins` integer DEFAULT 0 NOT NULL,
	`locked_until` text,
	`disabled_at` text,
	`last_login_at` text,
	`created_at` text NOT NULL,
	`updated_at` text NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `console_accounts_email` ON `console_accounts` (`email`);--> statement-breakpoint
CREATE TABLE `console_invitations` (
	`id` text PRIMARY KEY NOT NULL,
	`token_hash` text NOT NULL,
	`email` text NOT NULL,
	`empresa_id` text NOT NULL,
	`role` text NOT NULL,
	`resets_password` integer NOT NULL,
	`invited_by` text,
	`created_at` text NOT NULL,
	`expires_at` text NOT NULL,
	`used_at` text,
	`revoked_at` text,
	FOREIGN KEY (`empresa_id`) REFERENCES `empresas`(`id`) ON UPDATE no action ON DELETE no action,
	FOREIGN KEY (`invited_by`) REFERENCES `console_accounts`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE UNIQUE INDEX `console_invitations_token` ON `console_invitations` (`token_hash`);--> statement-breakpoint
CREATE INDEX `console_invitations_empresa` ON `console_invitations` (`empresa_id`,`email`);--> statement-breakpoint
CREATE TABLE `console_memberships` (
	`account_id` text NOT NULL,
	`empresa_id` text NOT NULL,
	`role` text NOT NULL,
	`created_at` text NOT NULL,
	PRIMARY KEY(`account_id`, `empresa_id`),
	FOREIGN KEY (`account_id`) REFERENCES `console_accounts`(`id`) ON UPDATE no action ON DELETE no action,
	FOREIGN KEY (`empresa_id`) REFERENCES `empresas`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE INDEX `console_memberships_empresa` ON `console_memberships` (`empresa_id`);--> statement-breakpoint
ALTER TABLE `console_sessions` ADD `account_id` text REFERENCES console_accounts(id);--> statement-breakpoint
CREATE INDEX `console_sessions_account` ON `console_sessions` (`account_id`);