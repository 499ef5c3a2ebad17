CREATE TABLE `console_login_failures` (
	`account_id` text NOT NULL,
	`address` text NOT NULL,
	`failures` integer NOT NULL,
	`locked_until` text,
	`updated_at` text NOT NULL,
	PRIMARY KEY(`account_id`, `address`),
	FOREIGN KEY (`account_id`) REFERENCES `console_accounts`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE INDEX `console_login_failures_updated` ON `console_login_failures` (`updated_at`);