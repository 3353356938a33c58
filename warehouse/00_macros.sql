-- Statistics shared by the views. Pure SQL so analysts can reuse them in their own queries.

-- Shannon entropy H = -sum p_i ln p_i of a list of counts (natural log).
CREATE OR REPLACE MACRO shannon_entropy(counts) AS
  list_sum(list_transform(counts, c -> -(c / list_sum(counts)) * ln(c / list_sum(counts))));

-- Shannon evenness E = H / ln n over n categories; undefined (NULL) when n < 2.
CREATE OR REPLACE MACRO shannon_evenness(counts) AS
  CASE WHEN len(counts) >= 2 THEN shannon_entropy(counts) / ln(len(counts)) END;
