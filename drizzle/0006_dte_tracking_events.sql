CREATE TABLE `dte_tracking_events` (
	`seq` integer PRIMARY KEY NOT NULL,
	`empresa_id` text NOT NULL,
	`dte_id` text NOT NULL,
	`at` text NOT NULL,
	`canal` text NOT NULL,
	`operacion` text NOT NULL,
	`track_id` text,
	`estado` text,
	`glosa` text,
	`err_code` text,
	`glosa_err` text,
	`num_atencion` text,
	`estadistica` text,
	`motivos` text NOT NULL,
	FOREIGN KEY (`empresa_id`) REFERENCES `empresas`(`id`) ON UPDATE no action ON DELETE no action,
	FOREIGN KEY (`dte_id`) REFERENCES `dtes`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE INDEX `dte_tracking_events_dte` ON `dte_tracking_events` (`empresa_id`,`dte_id`,`seq`);