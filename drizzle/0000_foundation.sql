CREATE TABLE `api_keys` (
	`id` text PRIMARY KEY NOT NULL,
	`empresa_id` text NOT NULL,
	`nombre` text,
	`key_hash` text NOT NULL,
	`prefix` text NOT NULL,
	`write` integer NOT NULL,
	`created_at` text NOT NULL,
	`expires_at` text,
	`last_used_at` text,
	`revoked_at` text,
	FOREIGN KEY (`empresa_id`) REFERENCES `empresas`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE UNIQUE INDEX `api_keys_hash_unique` ON `api_keys` (`key_hash`);--> statement-breakpoint
CREATE INDEX `api_keys_empresa` ON `api_keys` (`empresa_id`,`id`);--> statement-breakpoint
CREATE TABLE `empresas` (
	`id` text PRIMARY KEY NOT NULL,
	`rut` text NOT NULL,
	`razon_social` text NOT NULL,
	`giro` text NOT NULL,
	`acteco` text NOT NULL,
	`direccion` text NOT NULL,
	`comuna` text NOT NULL,
	`ciudad` text NOT NULL,
	`ambiente` text NOT NULL,
	`fecha_resolucion` text NOT NULL,
	`numero_resolucion` integer NOT NULL,
	`inbound_email` text,
	`inbound_status` text,
	`is_demo` integer DEFAULT false NOT NULL,
	`created_at` text NOT NULL,
	`updated_at` text NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `empresas_rut_unique` ON `empresas` (`rut`);