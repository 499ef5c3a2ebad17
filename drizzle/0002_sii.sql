CREATE TABLE `envios` (
	`id` text PRIMARY KEY NOT NULL,
	`empresa_id` text NOT NULL,
	`canal` text NOT NULL,
	`file_name` text NOT NULL,
	`xml` blob NOT NULL,
	`track_id` text,
	`created_at` text NOT NULL,
	FOREIGN KEY (`empresa_id`) REFERENCES `empresas`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE INDEX `envios_empresa` ON `envios` (`empresa_id`,`id`);--> statement-breakpoint
ALTER TABLE `dtes` ADD `consultas` integer DEFAULT 0 NOT NULL;