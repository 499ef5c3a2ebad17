CREATE TABLE `caf_solicitudes` (
	`id` text PRIMARY KEY NOT NULL,
	`empresa_id` text NOT NULL,
	`operacion` text NOT NULL,
	`origen` text NOT NULL,
	`tipo_dte` integer NOT NULL,
	`estado` text NOT NULL,
	`cantidad_pedida` integer,
	`cantidad_solicitada` integer,
	`max_autor` integer,
	`folio_desde` integer,
	`folio_hasta` integer,
	`fecha_otorgamiento` text,
	`otorgando_at` text,
	`caf_id` text,
	`motivo_anulacion` text,
	`reabrible` integer DEFAULT false NOT NULL,
	`falla_motivo` text,
	`falla_mensaje` text,
	`falla_etapa` text,
	`intentos` integer DEFAULT 0 NOT NULL,
	`proximo_intento_at` text,
	`lease_until` text,
	`lease_owner` text,
	`created_at` text NOT NULL,
	`updated_at` text NOT NULL,
	FOREIGN KEY (`empresa_id`) REFERENCES `empresas`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE INDEX `caf_solicitudes_empresa` ON `caf_solicitudes` (`empresa_id`,`id`);--> statement-breakpoint
CREATE INDEX `caf_solicitudes_estado` ON `caf_solicitudes` (`estado`,`proximo_intento_at`);--> statement-breakpoint
CREATE UNIQUE INDEX `caf_solicitudes_abierta` ON `caf_solicitudes` (`empresa_id`,`tipo_dte`) WHERE operacion = 'solicitud' and estado in ('en_curso', 'otorgado');--> statement-breakpoint
CREATE TABLE `folios_automaticos` (
	`empresa_id` text PRIMARY KEY NOT NULL,
	`activo` integer NOT NULL,
	`tipos` text NOT NULL,
	`cantidad` integer NOT NULL,
	`umbral` integer,
	`dias_antes_de_vencer` integer NOT NULL,
	`updated_at` text NOT NULL,
	FOREIGN KEY (`empresa_id`) REFERENCES `empresas`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
ALTER TABLE `cafs` ADD `anulacion_estado` text;--> statement-breakpoint
ALTER TABLE `cafs` ADD `folios_anulados` text;--> statement-breakpoint
ALTER TABLE `cafs` ADD `anulacion_motivo` text;--> statement-breakpoint
ALTER TABLE `cafs` ADD `anulado_at` text;