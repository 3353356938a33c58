-- Tables 6-7: demographics of the users: count and percentage of each value per attribute.
-- "N/A" ethnicity and religion read as "Prefer not to say"; region comes from birth_country.
-- requires: users, birth_country_regions
CREATE OR REPLACE VIEW unmapped_birth_countries AS
SELECT birth_country, count(*) AS users
FROM users u ANTI JOIN birth_country_regions r ON r.country = u.birth_country
GROUP BY birth_country ORDER BY users DESC, birth_country;

-- A table macro over the name of a users relation (46_build_validation.sql counts the released users with it).
CREATE OR REPLACE MACRO table6_7_of(t67_users) AS TABLE
WITH answers AS (
  SELECT 1 AS field_order, 'age' AS field, 'Age' AS field_label, age AS value FROM query_table(t67_users)
  UNION ALL SELECT 2, 'gender', 'Gender', gender FROM query_table(t67_users)
  UNION ALL SELECT 3, 'employment_status', 'Employment status', employment_status FROM query_table(t67_users)
  UNION ALL SELECT 4, 'education', 'Education', education FROM query_table(t67_users)
  UNION ALL SELECT 5, 'marital_status', 'Marital status', marital_status FROM query_table(t67_users)
  UNION ALL SELECT 6, 'english_proficiency', 'English proficiency', english_proficiency FROM query_table(t67_users)
  UNION ALL SELECT 7, 'ethnicity', 'Ethnicity', CASE WHEN ethnicity = 'N/A' THEN 'Prefer not to say' ELSE ethnicity END FROM query_table(t67_users)
  UNION ALL SELECT 8, 'religion', 'Religion', CASE WHEN religion = 'N/A' THEN 'Prefer not to say' ELSE religion END FROM query_table(t67_users)
  -- An unmapped country stays visible as its own row; `plens tables` also warns about it.
  UNION ALL SELECT 9, 'region', 'Region', coalesce(r.region, 'Unmapped: ' || u.birth_country)
    FROM query_table(t67_users) u LEFT JOIN birth_country_regions r ON r.country = u.birth_country
)
SELECT field, field_label, value, count(*) AS count, 100.0 * count(*) / (SELECT count(*) FROM query_table(t67_users)) AS percent
FROM answers
GROUP BY field_order, field, field_label, value
ORDER BY field_order, count DESC, value;

CREATE OR REPLACE VIEW table6_7 AS FROM table6_7_of('users');
