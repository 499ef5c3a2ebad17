CREATE TABLE `contribuyentes` (
	`rut` text PRIMARY KEY NOT NULL,
	`razon_social` text NOT NULL,
	`numero_resolucion` integer,
	`fecha_resolucion` text,
	`email_intercambio` text,
	`updated_at` text NOT NULL
);
--> statement-breakpoint
CREATE TABLE `dte_intercambio` (
	`dte_id` text PRIMARY KEY NOT NULL,
	`empresa_id` text NOT NULL,
	`estado` text NOT NULL,
	`email` text,
	`enviado_at` text,
	`acuse` text,
	`resultado` text,
	`eventos_receptor` text NOT NULL,
	`eventos_hasta` text,
	`next_eventos_at` text,
	`updated_at` text NOT NULL,
	FOREIGN KEY (`dte_id`) REFERENCES `dtes`(`id`) ON UPDATE no action ON DELETE no action,
	FOREIGN KEY (`empresa_id`) REFERENCES `empresas`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE INDEX `dte_intercambio_eventos_due` ON `dte_intercambio` (`next_eventos_at`);--> statement-breakpoint
CREATE TABLE `inbox_attachments` (
	`empresa_id` text NOT NULL,
	`sha256` text NOT NULL,
	`kind` text NOT NULL,
	`outcome` text NOT NULL,
	`from_address` text,
	`file_name` text,
	`created_at` text NOT NULL,
	PRIMARY KEY(`empresa_id`, `sha256`),
	FOREIGN KEY (`empresa_id`) REFERENCES `empresas`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE TABLE `mail_outbox` (
	`id` text PRIMARY KEY NOT NULL,
	`empresa_id` text NOT NULL,
	`kind` text NOT NULL,
	`dte_id` text,
	`recibido_id` text,
	`recibido_envio_id` text,
	`to_address` text,
	`subject` text NOT NULL,
	`attachment` blob,
	`attachment_name` text,
	`status` text NOT NULL,
	`attempt` integer DEFAULT 0 NOT NULL,
	`next_attempt_at` text,
	`last_error` text,
	`message_id` text,
	`sent_at` text,
	`created_at` text NOT NULL,
	`updated_at` text NOT NULL,
	FOREIGN KEY (`empresa_id`) REFERENCES `empresas`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE INDEX `mail_outbox_due` ON `mail_outbox` (`status`,`next_attempt_at`);--> statement-breakpoint
CREATE INDEX `mail_outbox_dte` ON `mail_outbox` (`dte_id`);--> statement-breakpoint
CREATE TABLE `mailboxes` (
	`empresa_id` text PRIMARY KEY NOT NULL,
	`imap_host` text NOT NULL,
	`imap_port` integer NOT NULL,
	`imap_tls` integer NOT NULL,
	`imap_user` text NOT NULL,
	`imap_password_sealed` blob NOT NULL,
	`imap_folder` text NOT NULL,
	`smtp_host` text NOT NULL,
	`smtp_port` integer NOT NULL,
	`smtp_security` text NOT NULL,
	`smtp_user` text,
	`smtp_password_sealed` blob,
	`smtp_from` text NOT NULL,
	`last_poll_at` text,
	`last_error` text,
	`created_at` text NOT NULL,
	`updated_at` text NOT NULL,
	FOREIGN KEY (`empresa_id`) REFERENCES `empresas`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE TABLE `recibidos` (
	`id` text PRIMARY KEY NOT NULL,
	`empresa_id` text NOT NULL,
	`envio_id` text NOT NULL,
	`rut_emisor` text NOT NULL,
	`razon_social_emisor` text NOT NULL,
	`tipo_dte` integer NOT NULL,
	`folio` integer NOT NULL,
	`fecha_emision` text NOT NULL,
	`rut_receptor` text NOT NULL,
	`monto_neto` integer,
	`monto_exento` integer,
	`iva` integer,
	`monto_total` integer NOT NULL,
	`estado` text NOT NULL,
	`estado_recep_dte` integer NOT NULL,
	`checks` text NOT NULL,
	`acciones` text NOT NULL,
	`fecha_recepcion_sii` text,
	`plazo` text,
	`plazo_avisado` integer DEFAULT false NOT NULL,
	`next_sii_at` text,
	`xml` blob NOT NULL,
	`recibido_at` text NOT NULL,
	`updated_at` text NOT NULL,
	FOREIGN KEY (`empresa_id`) REFERENCES `empresas`(`id`) ON UPDATE no action ON DELETE no action,
	FOREIGN KEY (`envio_id`) REFERENCES `recibidos_envios`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE INDEX `recibidos_empresa` ON `recibidos` (`empresa_id`,`id`);--> statement-breakpoint
CREATE INDEX `recibidos_empresa_emisor` ON `recibidos` (`empresa_id`,`rut_emisor`,`tipo_dte`,`folio`);--> statement-breakpoint
CREATE INDEX `recibidos_empresa_estado` ON `recibidos` (`empresa_id`,`estado`,`id`);--> statement-breakpoint
CREATE INDEX `recibidos_empresa_fecha` ON `recibidos` (`empresa_id`,`fecha_emision`,`id`);--> statement-breakpoint
CREATE INDEX `recibidos_sii_due` ON `recibidos` (`next_sii_at`);--> statement-breakpoint
CREATE TABLE `recibidos_envios` (
	`id` text PRIMARY KEY NOT NULL,
	`empresa_id` text NOT NULL,
	`sha256` text NOT NULL,
	`origen` text NOT NULL,
	`from_address` text,
	`file_name` text,
	`envio_dte_id` text,
	`rut_emisor` text,
	`rut_envia` text,
	`estado_recep_env` integer NOT NULL,
	`glosa` text NOT NULL,
	`checks` text NOT NULL,
	`xml` blob NOT NULL,
	`created_at` text NOT NULL,
	FOREIGN KEY (`empresa_id`) REFERENCES `empresas`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE UNIQUE INDEX `recibidos_envios_sha` ON `recibidos_envios` (`empresa_id`,`sha256`);