CREATE TABLE `clientes` (
	`seq` integer PRIMARY KEY NOT NULL,
	`id` text NOT NULL,
	`empresa_id` text NOT NULL,
	`empresa_key` integer NOT NULL,
	`rut` text NOT NULL,
	`razon_social` text NOT NULL,
	`giro` text,
	`direccion` text,
	`comuna` text,
	`ciudad` text,
	`email` text,
	`telefono` text,
	`contacto` text,
	`notas` text,
	`busqueda` text NOT NULL,
	`created_at` text NOT NULL,
	`updated_at` text NOT NULL,
	`deleted_at` text,
	FOREIGN KEY (`empresa_id`) REFERENCES `empresas`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE UNIQUE INDEX `clientes_id_unique` ON `clientes` (`id`);--> statement-breakpoint
CREATE UNIQUE INDEX `clientes_empresa_rut_live` ON `clientes` (`empresa_id`,`rut`) WHERE deleted_at IS NULL;--> statement-breakpoint
CREATE INDEX `clientes_empresa_live` ON `clientes` (`empresa_id`,`id`) WHERE deleted_at IS NULL;--> statement-breakpoint
CREATE INDEX `clientes_empresa_seq_live` ON `clientes` (`empresa_id`,`seq`,`busqueda`,`rut`) WHERE deleted_at IS NULL;--> statement-breakpoint
CREATE TABLE `productos` (
	`seq` integer PRIMARY KEY NOT NULL,
	`id` text NOT NULL,
	`empresa_id` text NOT NULL,
	`empresa_key` integer NOT NULL,
	`codigo` text,
	`nombre` text NOT NULL,
	`descripcion` text,
	`precio_unitario` integer,
	`unidad` text NOT NULL,
	`es_exento` integer NOT NULL,
	`categoria` text,
	`busqueda` text NOT NULL,
	`busqueda_codigo` text,
	`created_at` text NOT NULL,
	`updated_at` text NOT NULL,
	`deleted_at` text,
	FOREIGN KEY (`empresa_id`) REFERENCES `empresas`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE UNIQUE INDEX `productos_id_unique` ON `productos` (`id`);--> statement-breakpoint
CREATE UNIQUE INDEX `productos_empresa_codigo_live` ON `productos` (`empresa_id`,`codigo`) WHERE deleted_at IS NULL;--> statement-breakpoint
CREATE INDEX `productos_empresa_live` ON `productos` (`empresa_id`,`id`) WHERE deleted_at IS NULL;--> statement-breakpoint
CREATE INDEX `productos_empresa_categoria_live` ON `productos` (`empresa_id`,`categoria`,`id`) WHERE deleted_at IS NULL;--> statement-breakpoint
CREATE INDEX `productos_empresa_seq_live` ON `productos` (`empresa_id`,`seq`,`busqueda`,`busqueda_codigo`) WHERE deleted_at IS NULL;--> statement-breakpoint
-- Hand-written below (drizzle-kit has no virtual tables): the search indexes of DESIGN §8, docs/decisions/catalogs.md.
-- FTS5 trigram: any substring of 3+ characters is an index lookup. Contentless (the text lives in the tables above,
-- already folded by domain/catalogo.ts foldText), holding live rows only, each under the key empresa_key × 2^40 + seq:
-- one company's rows are one rowid range, which a search seeks into and walks newest first, whatever other companies
-- hold (src/db/catalog-index.ts). The triggers keep it in step with every insert, edit and soft delete, inside the
-- writing transaction.
CREATE VIRTUAL TABLE `clientes_fts` USING fts5(`nombre`, `rut`, content='', contentless_delete=1, tokenize='trigram');
--> statement-breakpoint
CREATE TRIGGER `clientes_fts_insert` AFTER INSERT ON `clientes` WHEN new.`deleted_at` IS NULL BEGIN
	INSERT INTO `clientes_fts` (rowid, `nombre`, `rut`)
	VALUES (new.`empresa_key` * 1099511627776 + new.`seq`, new.`busqueda`, lower(replace(new.`rut`, '-', '')));
END;
--> statement-breakpoint
CREATE TRIGGER `clientes_fts_update` AFTER UPDATE OF `busqueda`, `rut`, `deleted_at` ON `clientes` BEGIN
	DELETE FROM `clientes_fts` WHERE rowid = old.`empresa_key` * 1099511627776 + old.`seq`;
	INSERT INTO `clientes_fts` (rowid, `nombre`, `rut`)
	SELECT new.`empresa_key` * 1099511627776 + new.`seq`, new.`busqueda`, lower(replace(new.`rut`, '-', '')) WHERE new.`deleted_at` IS NULL;
END;
--> statement-breakpoint
CREATE TRIGGER `clientes_fts_delete` AFTER DELETE ON `clientes` BEGIN
	DELETE FROM `clientes_fts` WHERE rowid = old.`empresa_key` * 1099511627776 + old.`seq`;
END;
--> statement-breakpoint
CREATE VIRTUAL TABLE `productos_fts` USING fts5(`nombre`, `codigo`, content='', contentless_delete=1, tokenize='trigram');
--> statement-breakpoint
CREATE TRIGGER `productos_fts_insert` AFTER INSERT ON `productos` WHEN new.`deleted_at` IS NULL BEGIN
	INSERT INTO `productos_fts` (rowid, `nombre`, `codigo`)
	VALUES (new.`empresa_key` * 1099511627776 + new.`seq`, new.`busqueda`, new.`busqueda_codigo`);
END;
--> statement-breakpoint
CREATE TRIGGER `productos_fts_update` AFTER UPDATE OF `busqueda`, `busqueda_codigo`, `deleted_at` ON `productos` BEGIN
	DELETE FROM `productos_fts` WHERE rowid = old.`empresa_key` * 1099511627776 + old.`seq`;
	INSERT INTO `productos_fts` (rowid, `nombre`, `codigo`)
	SELECT new.`empresa_key` * 1099511627776 + new.`seq`, new.`busqueda`, new.`busqueda_codigo` WHERE new.`deleted_at` IS NULL;
END;
--> statement-breakpoint
CREATE TRIGGER `productos_fts_delete` AFTER DELETE ON `productos` BEGIN
	DELETE FROM `productos_fts` WHERE rowid = old.`empresa_key` * 1099511627776 + old.`seq`;
END;
