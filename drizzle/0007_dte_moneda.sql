ALTER TABLE `dtes` ADD `moneda` text;--> statement-breakpoint
ALTER TABLE `dtes` ADD `monto_total_moneda` text;--> statement-breakpoint
-- Exports issued before this migration: their currency and own MntTotal, read from the signed XML they keep. `xml` holds
-- ISO-8859-1 bytes, so the search runs on the BLOB (instr and substr count bytes there; a Latin-1 name is no UTF-8).
-- In Exportaciones the Totales come after Receptor and Transporte and begin TpoMoneda, MntExe, MntTotal; OtraMoneda and
-- the TED's MNT come after them, so the first of each tag after <Totales> is the document's (DTE_v10.xsd).
UPDATE `dtes` SET `moneda` = `src`.`moneda`, `monto_total_moneda` = `src`.`monto`
FROM (
	SELECT `id`,
		CAST(substr(`t`, instr(`t`, CAST('<TpoMoneda>' AS BLOB)) + 11, instr(`t`, CAST('</TpoMoneda>' AS BLOB)) - instr(`t`, CAST('<TpoMoneda>' AS BLOB)) - 11) AS TEXT) AS `moneda`,
		CAST(substr(`t`, instr(`t`, CAST('<MntTotal>' AS BLOB)) + 10, instr(`t`, CAST('</MntTotal>' AS BLOB)) - instr(`t`, CAST('<MntTotal>' AS BLOB)) - 10) AS TEXT) AS `monto`
	FROM (SELECT `id`, substr(`xml`, instr(`xml`, CAST('<Totales>' AS BLOB))) AS `t` FROM `dtes` WHERE `tipo_dte` IN (110, 111, 112))
	WHERE instr(`t`, CAST('<TpoMoneda>' AS BLOB)) > 0 AND instr(`t`, CAST('</MntTotal>' AS BLOB)) > 0
) AS `src`
WHERE `dtes`.`id` = `src`.`id`;
