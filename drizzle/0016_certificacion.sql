CREATE TABLE `certificacion_casos` (
	`set_id` text NOT NULL,
	`caso` text NOT NULL,
	`empresa_id` text NOT NULL,
	`posicion` integer NOT NULL,
	`tipo_dte` integer NOT NULL,
	`intento` integer DEFAULT 0 NOT NULL,
	`dte_id` text,
	`updated_at` text NOT NULL,
	PRIMARY KEY(`set_id`, `caso`),
	FOREIGN KEY (`set_id`) REFERENCES `certificacion_sets`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`empresa_id`) REFERENCES `empresas`(`id`) ON UPDATE no action ON DELETE no action,
	FOREIGN KEY (`dte_id`) REFERENCES `dtes`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE INDEX `certificacion_casos_empresa` ON `certificacion_casos` (`empresa_id`);--> statement-breakpoint
CREATE TABLE `certificacion_envios` (
	`id` text PRIMARY KEY NOT NULL,
	`empresa_id` text NOT NULL,
	`clase` text NOT NULL,
	`nombres` text NOT NULL,
	`envio_id` text NOT NULL,
	`dte_ids` text NOT NULL,
	`fuente` text,
	`estado` text NOT NULL,
	`track_id` text,
	`glosa_sii` text,
	`intentos` integer DEFAULT 0 NOT NULL,
	`next_attempt_at` text,
	`enviado_at` text,
	`created_at` text NOT NULL,
	`updated_at` text NOT NULL,
	FOREIGN KEY (`empresa_id`) REFERENCES `empresas`(`id`) ON UPDATE no action ON DELETE no action,
	FOREIGN KEY (`envio_id`) REFERENCES `envios`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE INDEX `certificacion_envios_empresa` ON `certificacion_envios` (`empresa_id`,`created_at`);--> statement-breakpoint
CREATE TABLE `certificacion_etapas` (
	`empresa_id` text NOT NULL,
	`etapa` text NOT NULL,
	`estado` text NOT NULL,
	`nota` text,
	`updated_at` text NOT NULL,
	PRIMARY KEY(`empresa_id`, `etapa`),
	FOREIGN KEY (`empresa_id`) REFERENCES `empresas`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE TABLE `certificacion_sets` (
	`id` text PRIMARY KEY NOT NULL,
	`empresa_id` text NOT NULL,
	`nombre` text NOT NULL,
	`numero_atencion` integer NOT NULL,
	`set` text NOT NULL,
	`indicaciones` text NOT NULL,
	`archivo_sha256` text NOT NULL,
	`created_at` text NOT NULL,
	FOREIGN KEY (`empresa_id`) REFERENCES `empresas`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE UNIQUE INDEX `certificacion_sets_nombre` ON `certificacion_sets` (`empresa_id`,`nombre`);