-- The echo plug-in's words (a test benchmark: test/plugins/echo/module.ts).
-- requires-file: echo/echo.json
CREATE OR REPLACE TABLE echo_words AS
SELECT i, word, length FROM read_json(getvariable('workspace') || '/echo/echo.json', format = 'newline_delimited') ORDER BY i;
