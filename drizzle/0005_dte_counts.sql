CREATE TABLE `dte_counts` (
	`empresa_id` text PRIMARY KEY NOT NULL,
	`n` integer NOT NULL,
	FOREIGN KEY (`empresa_id`) REFERENCES `empresas`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
INSERT INTO `dte_counts` (`empresa_id`, `n`) SELECT `empresa_id`, count(*) FROM `dtes` GROUP BY `empresa_id`;--> statement-breakpoint
CREATE TRIGGER `dtes_count_insert` AFTER INSERT ON `dtes` BEGIN
	INSERT INTO `dte_counts` (`empresa_id`, `n`) VALUES (NEW.`empresa_id`, 1)
		ON CONFLICT (`empresa_id`) DO UPDATE SET `n` = `n` + 1;
END;
