-- GET /dte's total_count from trigger-kept buckets, and list indexes that test every filter (docs/decisions/list-counts.md).
-- The per-company counter of 0005 becomes one row per company, tipo and estado. IF EXISTS: a store rewound by hand to
-- an earlier schema (test/http/dte-exports.test.ts drops the tables of later migrations) may lack one or hold another.
DROP TRIGGER IF EXISTS `dtes_count_insert`;
--> statement-breakpoint
DROP TRIGGER IF EXISTS `dtes_count_update`;
--> statement-breakpoint
DROP TRIGGER IF EXISTS `dtes_count_delete`;
--> statement-breakpoint
DROP TABLE IF EXISTS `dte_counts`;
--> statement-breakpoint
CREATE TABLE `dte_counts` (
	`empresa_id` text NOT NULL,
	`tipo_dte` integer NOT NULL,
	`estado` text NOT NULL,
	`n` integer NOT NULL,
	`min_id` text NOT NULL,
	`max_id` text NOT NULL,
	PRIMARY KEY(`empresa_id`, `tipo_dte`, `estado`),
	FOREIGN KEY (`empresa_id`) REFERENCES `empresas`(`id`) ON UPDATE no action ON DELETE no action
) WITHOUT ROWID;
--> statement-breakpoint
CREATE TABLE `dte_counts_dia` (
	`empresa_id` text NOT NULL,
	`tipo_dte` integer NOT NULL,
	`estado` text NOT NULL,
	`n` integer NOT NULL,
	`min_id` text NOT NULL,
	`max_id` text NOT NULL,
	`fecha_emision` text NOT NULL,
	PRIMARY KEY(`empresa_id`, `fecha_emision`, `tipo_dte`, `estado`),
	FOREIGN KEY (`empresa_id`) REFERENCES `empresas`(`id`) ON UPDATE no action ON DELETE no action
) WITHOUT ROWID;
--> statement-breakpoint
CREATE TABLE `dte_counts_receptor` (
	`empresa_id` text NOT NULL,
	`tipo_dte` integer NOT NULL,
	`estado` text NOT NULL,
	`n` integer NOT NULL,
	`min_id` text NOT NULL,
	`max_id` text NOT NULL,
	`rut_receptor` text NOT NULL,
	`fecha_emision` text NOT NULL,
	PRIMARY KEY(`empresa_id`, `rut_receptor`, `fecha_emision`, `tipo_dte`, `estado`),
	FOREIGN KEY (`empresa_id`) REFERENCES `empresas`(`id`) ON UPDATE no action ON DELETE no action
) WITHOUT ROWID;
--> statement-breakpoint
DROP INDEX `dtes_empresa`;
--> statement-breakpoint
DROP INDEX `dtes_empresa_estado`;
--> statement-breakpoint
DROP INDEX `dtes_empresa_tipo`;
--> statement-breakpoint
DROP INDEX `dtes_empresa_fecha`;
--> statement-breakpoint
DROP INDEX `dtes_empresa_receptor`;
--> statement-breakpoint
CREATE INDEX `dtes_empresa` ON `dtes` (`empresa_id`,`id`,`fecha_emision`);
--> statement-breakpoint
CREATE INDEX `dtes_empresa_estado` ON `dtes` (`empresa_id`,`estado`,`id`,`fecha_emision`,`tipo_dte`,`rut_receptor`);
--> statement-breakpoint
CREATE INDEX `dtes_empresa_tipo` ON `dtes` (`empresa_id`,`tipo_dte`,`id`,`fecha_emision`,`rut_receptor`);
--> statement-breakpoint
CREATE INDEX `dtes_empresa_fecha` ON `dtes` (`empresa_id`,`fecha_emision`,`id`,`tipo_dte`,`rut_receptor`);
--> statement-breakpoint
CREATE INDEX `dtes_empresa_receptor` ON `dtes` (`empresa_id`,`rut_receptor`,`id`,`fecha_emision`,`tipo_dte`);
--> statement-breakpoint
INSERT INTO `dte_counts` (`empresa_id`, `tipo_dte`, `estado`, `n`, `min_id`, `max_id`)
	SELECT `empresa_id`, `tipo_dte`, `estado`, count(*), min(`id`), max(`id`) FROM `dtes` INDEXED BY `dtes_empresa_estado` GROUP BY `empresa_id`, `tipo_dte`, `estado`;
--> statement-breakpoint
INSERT INTO `dte_counts_dia` (`empresa_id`, `fecha_emision`, `tipo_dte`, `estado`, `n`, `min_id`, `max_id`)
	SELECT `empresa_id`, `fecha_emision`, `tipo_dte`, `estado`, count(*), min(`id`), max(`id`) FROM `dtes` INDEXED BY `dtes_empresa_estado` GROUP BY `empresa_id`, `fecha_emision`, `tipo_dte`, `estado`;
--> statement-breakpoint
INSERT INTO `dte_counts_receptor` (`empresa_id`, `rut_receptor`, `fecha_emision`, `tipo_dte`, `estado`, `n`, `min_id`, `max_id`)
	SELECT `empresa_id`, `rut_receptor`, `fecha_emision`, `tipo_dte`, `estado`, count(*), min(`id`), max(`id`) FROM `dtes` INDEXED BY `dtes_empresa_estado`
	GROUP BY `empresa_id`, `rut_receptor`, `fecha_emision`, `tipo_dte`, `estado`;
--> statement-breakpoint
-- Every insert counts the DTE in its three buckets, in the inserting transaction.
CREATE TRIGGER `dtes_count_insert` AFTER INSERT ON `dtes` BEGIN
	INSERT INTO `dte_counts` (`empresa_id`, `tipo_dte`, `estado`, `n`, `min_id`, `max_id`)
		VALUES (NEW.`empresa_id`, NEW.`tipo_dte`, NEW.`estado`, 1, NEW.`id`, NEW.`id`)
		ON CONFLICT DO UPDATE SET `n` = `n` + 1, `min_id` = min(`min_id`, excluded.`min_id`), `max_id` = max(`max_id`, excluded.`max_id`);
	INSERT INTO `dte_counts_dia` (`empresa_id`, `fecha_emision`, `tipo_dte`, `estado`, `n`, `min_id`, `max_id`)
		VALUES (NEW.`empresa_id`, NEW.`fecha_emision`, NEW.`tipo_dte`, NEW.`estado`, 1, NEW.`id`, NEW.`id`)
		ON CONFLICT DO UPDATE SET `n` = `n` + 1, `min_id` = min(`min_id`, excluded.`min_id`), `max_id` = max(`max_id`, excluded.`max_id`);
	INSERT INTO `dte_counts_receptor` (`empresa_id`, `rut_receptor`, `fecha_emision`, `tipo_dte`, `estado`, `n`, `min_id`, `max_id`)
		VALUES (NEW.`empresa_id`, NEW.`rut_receptor`, NEW.`fecha_emision`, NEW.`tipo_dte`, NEW.`estado`, 1, NEW.`id`, NEW.`id`)
		ON CONFLICT DO UPDATE SET `n` = `n` + 1, `min_id` = min(`min_id`, excluded.`min_id`), `max_id` = max(`max_id`, excluded.`max_id`);
END;
--> statement-breakpoint
-- An estado change (the SII jobs, /enviar) moves the DTE between buckets; an emptied bucket goes, and with it its id bounds.
CREATE TRIGGER `dtes_count_update` AFTER UPDATE OF `id`, `empresa_id`, `tipo_dte`, `estado`, `fecha_emision`, `rut_receptor` ON `dtes`
	WHEN OLD.`id` IS NOT NEW.`id` OR OLD.`empresa_id` IS NOT NEW.`empresa_id` OR OLD.`tipo_dte` IS NOT NEW.`tipo_dte` OR OLD.`estado` IS NOT NEW.`estado`
		OR OLD.`fecha_emision` IS NOT NEW.`fecha_emision` OR OLD.`rut_receptor` IS NOT NEW.`rut_receptor`
BEGIN
	UPDATE `dte_counts` SET `n` = `n` - 1 WHERE `empresa_id` = OLD.`empresa_id` AND `tipo_dte` = OLD.`tipo_dte` AND `estado` = OLD.`estado`;
	DELETE FROM `dte_counts` WHERE `empresa_id` = OLD.`empresa_id` AND `tipo_dte` = OLD.`tipo_dte` AND `estado` = OLD.`estado` AND `n` = 0;
	UPDATE `dte_counts_dia` SET `n` = `n` - 1 WHERE `empresa_id` = OLD.`empresa_id` AND `fecha_emision` = OLD.`fecha_emision` AND `tipo_dte` = OLD.`tipo_dte` AND `estado` = OLD.`estado`;
	DELETE FROM `dte_counts_dia` WHERE `empresa_id` = OLD.`empresa_id` AND `fecha_emision` = OLD.`fecha_emision` AND `tipo_dte` = OLD.`tipo_dte` AND `estado` = OLD.`estado` AND `n` = 0;
	UPDATE `dte_counts_receptor` SET `n` = `n` - 1 WHERE `empresa_id` = OLD.`empresa_id` AND `rut_receptor` = OLD.`rut_receptor` AND `fecha_emision` = OLD.`fecha_emision` AND `tipo_dte` = OLD.`tipo_dte` AND `estado` = OLD.`estado`;
	DELETE FROM `dte_counts_receptor` WHERE `empresa_id` = OLD.`empresa_id` AND `rut_receptor` = OLD.`rut_receptor` AND `fecha_emision` = OLD.`fecha_emision` AND `tipo_dte` = OLD.`tipo_dte` AND `estado` = OLD.`estado` AND `n` = 0;
	INSERT INTO `dte_counts` (`empresa_id`, `tipo_dte`, `estado`, `n`, `min_id`, `max_id`)
		VALUES (NEW.`empresa_id`, NEW.`tipo_dte`, NEW.`estado`, 1, NEW.`id`, NEW.`id`)
		ON CONFLICT DO UPDATE SET `n` = `n` + 1, `min_id` = min(`min_id`, excluded.`min_id`), `max_id` = max(`max_id`, excluded.`max_id`);
	INSERT INTO `dte_counts_dia` (`empresa_id`, `fecha_emision`, `tipo_dte`, `estado`, `n`, `min_id`, `max_id`)
		VALUES (NEW.`empresa_id`, NEW.`fecha_emision`, NEW.`tipo_dte`, NEW.`estado`, 1, NEW.`id`, NEW.`id`)
		ON CONFLICT DO UPDATE SET `n` = `n` + 1, `min_id` = min(`min_id`, excluded.`min_id`), `max_id` = max(`max_id`, excluded.`max_id`);
	INSERT INTO `dte_counts_receptor` (`empresa_id`, `rut_receptor`, `fecha_emision`, `tipo_dte`, `estado`, `n`, `min_id`, `max_id`)
		VALUES (NEW.`empresa_id`, NEW.`rut_receptor`, NEW.`fecha_emision`, NEW.`tipo_dte`, NEW.`estado`, 1, NEW.`id`, NEW.`id`)
		ON CONFLICT DO UPDATE SET `n` = `n` + 1, `min_id` = min(`min_id`, excluded.`min_id`), `max_id` = max(`max_id`, excluded.`max_id`);
END;
--> statement-breakpoint
-- DTEs are never deleted (DESIGN §12); should one be, its count goes with it.
CREATE TRIGGER `dtes_count_delete` AFTER DELETE ON `dtes` BEGIN
	UPDATE `dte_counts` SET `n` = `n` - 1 WHERE `empresa_id` = OLD.`empresa_id` AND `tipo_dte` = OLD.`tipo_dte` AND `estado` = OLD.`estado`;
	DELETE FROM `dte_counts` WHERE `empresa_id` = OLD.`empresa_id` AND `tipo_dte` = OLD.`tipo_dte` AND `estado` = OLD.`estado` AND `n` = 0;
	UPDATE `dte_counts_dia` SET `n` = `n` - 1 WHERE `empresa_id` = OLD.`empresa_id` AND `fecha_emision` = OLD.`fecha_emision` AND `tipo_dte` = OLD.`tipo_dte` AND `estado` = OLD.`estado`;
	DELETE FROM `dte_counts_dia` WHERE `empresa_id` = OLD.`empresa_id` AND `fecha_emision` = OLD.`fecha_emision` AND `tipo_dte` = OLD.`tipo_dte` AND `estado` = OLD.`estado` AND `n` = 0;
	UPDATE `dte_counts_receptor` SET `n` = `n` - 1 WHERE `empresa_id` = OLD.`empresa_id` AND `rut_receptor` = OLD.`rut_receptor` AND `fecha_emision` = OLD.`fecha_emision` AND `tipo_dte` = OLD.`tipo_dte` AND `estado` = OLD.`estado`;
	DELETE FROM `dte_counts_receptor` WHERE `empresa_id` = OLD.`empresa_id` AND `rut_receptor` = OLD.`rut_receptor` AND `fecha_emision` = OLD.`fecha_emision` AND `tipo_dte` = OLD.`tipo_dte` AND `estado` = OLD.`estado` AND `n` = 0;
END;
