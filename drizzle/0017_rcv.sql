CREATE TABLE `rcv_detalles` (
	`empresa_id` text NOT NULL,
	`periodo` text NOT NULL,
	`registro` text NOT NULL,
	`seccion` text NOT NULL,
	`n` integer NOT NULL,
	`tipo_doc` integer NOT NULL,
	`rut` text NOT NULL,
	`folio` integer NOT NULL,
	`detalle` text NOT NULL,
	PRIMARY KEY(`empresa_id`, `periodo`, `registro`, `seccion`, `n`),
	FOREIGN KEY (`empresa_id`) REFERENCES `empresas`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE TABLE `rcv_periodos` (
	`empresa_id` text NOT NULL,
	`periodo` text NOT NULL,
	`resumen` text,
	`sincronizado_at` text,
	`diferidas` integer DEFAULT 0 NOT NULL,
	`solicitado_at` text,
	`intento_at` text,
	`lease_until` text,
	`falla_motivo` text,
	`falla_mensaje` text,
	`falla_at` text,
	`updated_at` text NOT NULL,
	PRIMARY KEY(`empresa_id`, `periodo`),
	FOREIGN KEY (`empresa_id`) REFERENCES `empresas`(`id`) ON UPDATE no action ON DELETE no action
);
