CREATE TABLE `cafs` (
	`id` text PRIMARY KEY NOT NULL,
	`empresa_id` text NOT NULL,
	`tipo_dte` integer NOT NULL,
	`folio_desde` integer NOT NULL,
	`folio_hasta` integer NOT NULL,
	`next_folio` integer NOT NULL,
	`fecha_autorizacion` text NOT NULL,
	`vence_el` text,
	`idk` integer NOT NULL,
	`ambiente` text NOT NULL,
	`caf_xml` text NOT NULL,
	`private_key_sealed` blob NOT NULL,
	`created_at` text NOT NULL,
	FOREIGN KEY (`empresa_id`) REFERENCES `empresas`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE INDEX `cafs_empresa_tipo` ON `cafs` (`empresa_id`,`tipo_dte`,`id`);--> statement-breakpoint
CREATE INDEX `cafs_empresa` ON `cafs` (`empresa_id`,`id`);--> statement-breakpoint
CREATE TABLE `certificados` (
	`id` text PRIMARY KEY NOT NULL,
	`empresa_id` text NOT NULL,
	`rut_firmante` text NOT NULL,
	`subject_cn` text NOT NULL,
	`serial_number` text NOT NULL,
	`not_before` text NOT NULL,
	`not_after` text NOT NULL,
	`certificate_der` blob NOT NULL,
	`private_key_sealed` blob NOT NULL,
	`is_active` integer NOT NULL,
	`uploaded_at` text NOT NULL,
	FOREIGN KEY (`empresa_id`) REFERENCES `empresas`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE INDEX `certificados_empresa` ON `certificados` (`empresa_id`,`id`);--> statement-breakpoint
CREATE TABLE `dtes` (
	`id` text PRIMARY KEY NOT NULL,
	`empresa_id` text NOT NULL,
	`tipo_dte` integer NOT NULL,
	`folio` integer NOT NULL,
	`caf_id` text NOT NULL,
	`estado` text NOT NULL,
	`rut_receptor` text NOT NULL,
	`razon_social_receptor` text NOT NULL,
	`fecha_emision` text NOT NULL,
	`monto_neto` integer,
	`monto_exento` integer,
	`tasa_iva` real NOT NULL,
	`iva` integer,
	`monto_total` integer NOT NULL,
	`detalle` text NOT NULL,
	`referencias` text NOT NULL,
	`request` text NOT NULL,
	`xml` blob NOT NULL,
	`auto_send` integer NOT NULL,
	`metadata` text NOT NULL,
	`envio_id` text,
	`track_id` text,
	`estado_envio` text,
	`codigo_sii` text,
	`glosa_sii` text,
	`informados` integer DEFAULT 0 NOT NULL,
	`aceptados` integer DEFAULT 0 NOT NULL,
	`rechazados` integer DEFAULT 0 NOT NULL,
	`reparos` integer DEFAULT 0 NOT NULL,
	`intentos` integer DEFAULT 0 NOT NULL,
	`next_attempt_at` text,
	`sii_status` text,
	`created_at` text NOT NULL,
	`updated_at` text NOT NULL,
	FOREIGN KEY (`empresa_id`) REFERENCES `empresas`(`id`) ON UPDATE no action ON DELETE no action,
	FOREIGN KEY (`caf_id`) REFERENCES `cafs`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE UNIQUE INDEX `dtes_empresa_tipo_folio` ON `dtes` (`empresa_id`,`tipo_dte`,`folio`);--> statement-breakpoint
CREATE INDEX `dtes_empresa` ON `dtes` (`empresa_id`,`id`);--> statement-breakpoint
CREATE INDEX `dtes_empresa_estado` ON `dtes` (`empresa_id`,`estado`,`id`);--> statement-breakpoint
CREATE INDEX `dtes_empresa_tipo` ON `dtes` (`empresa_id`,`tipo_dte`,`id`);--> statement-breakpoint
CREATE INDEX `dtes_empresa_fecha` ON `dtes` (`empresa_id`,`fecha_emision`,`id`);--> statement-breakpoint
CREATE INDEX `dtes_empresa_receptor` ON `dtes` (`empresa_id`,`rut_receptor`,`id`);--> statement-breakpoint
CREATE INDEX `dtes_due` ON `dtes` (`estado`,`next_attempt_at`);--> statement-breakpoint
CREATE TABLE `idempotency_keys` (
	`empresa_id` text NOT NULL,
	`key` text NOT NULL,
	`request_hash` text NOT NULL,
	`response_status` integer NOT NULL,
	`response_body` text NOT NULL,
	`location` text,
	`created_at` text NOT NULL,
	PRIMARY KEY(`empresa_id`, `key`),
	FOREIGN KEY (`empresa_id`) REFERENCES `empresas`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE INDEX `idempotency_created` ON `idempotency_keys` (`created_at`);