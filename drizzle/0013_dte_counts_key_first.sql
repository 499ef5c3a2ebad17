-- The two bucket tables of 0010 whose key columns were not declared first are rebuilt with them first, in the key's
-- order (issue 27). SQLite before 3.42 (Debian 12's sqlite3 and Python's sqlite3 module, 3.40.1) reports such a
-- WITHOUT ROWID table as corrupt in `PRAGMA integrity_check` ("NULL value in dte_counts_receptor.n") although it is
-- healthy, so an operator checking a backup with the system's tools was told it was damaged. No RENAME: the triggers
-- of 0010 name these tables, and a rename checks every trigger; the counts are recounted from `dtes`, as 0010 did (exact
-- bounds, where the old rows could only be wider). The triggers list their columns, so they need no change.
DROP TABLE IF EXISTS `dte_counts_dia`;
--> statement-breakpoint
CREATE TABLE `dte_counts_dia` (
	`empresa_id` text NOT NULL,
	`fecha_emision` text NOT NULL,
	`tipo_dte` integer NOT NULL,
	`estado` text NOT NULL,
	`n` integer NOT NULL,
	`min_id` text NOT NULL,
	`max_id` text NOT NULL,
	PRIMARY KEY(`empresa_id`, `fecha_emision`, `tipo_dte`, `estado`),
	FOREIGN KEY (`empresa_id`) REFERENCES `empresas`(`id`) ON UPDATE no action ON DELETE no action
) WITHOUT ROWID;
--> statement-breakpoint
INSERT INTO `dte_counts_dia` (`empresa_id`, `fecha_emision`, `tipo_dte`, `estado`, `n`, `min_id`, `max_id`)
	SELECT `empresa_id`, `fecha_emision`, `tipo_dte`, `estado`, count(*), min(`id`), max(`id`) FROM `dtes` INDEXED BY `dtes_empresa_estado` GROUP BY `empresa_id`, `fecha_emision`, `tipo_dte`, `estado`;
--> statement-breakpoint
DROP TABLE IF EXISTS `dte_counts_receptor`;
--> statement-breakpoint
CREATE TABLE `dte_counts_receptor` (
	`empresa_id` text NOT NULL,
	`rut_receptor` text NOT NULL,
	`fecha_emision` text NOT NULL,
	`tipo_dte` integer NOT NULL,
	`estado` text NOT NULL,
	`n` integer NOT NULL,
	`min_id` text NOT NULL,
	`max_id` text NOT NULL,
	PRIMARY KEY(`empresa_id`, `rut_receptor`, `fecha_emision`, `tipo_dte`, `estado`),
	FOREIGN KEY (`empresa_id`) REFERENCES `empresas`(`id`) ON UPDATE no action ON DELETE no action
) WITHOUT ROWID;
--> statement-breakpoint
INSERT INTO `dte_counts_receptor` (`empresa_id`, `rut_receptor`, `fecha_emision`, `tipo_dte`, `estado`, `n`, `min_id`, `max_id`)
	SELECT `empresa_id`, `rut_receptor`, `fecha_emision`, `tipo_dte`, `estado`, count(*), min(`id`), max(`id`) FROM `dtes` INDEXED BY `dtes_empresa_estado`
	GROUP BY `empresa_id`, `rut_receptor`, `fecha_emision`, `tipo_dte`, `estado`;
