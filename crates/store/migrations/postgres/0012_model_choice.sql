-- Model choice per conversation and fallback chains, PostgreSQL flavour (twin:
-- migrations/sqlite/0012_model_choice.sql).
--
-- A conversation may override the provider and model its bud (or the workspace default) answers
-- with; `NULL` keeps the bud's. A bud may list fallbacks, a JSON array of {provider, model} tried
-- in order when the one before fails before streaming anything (5xx, timeout, 429, 529).
ALTER TABLE conversations ADD COLUMN llm_provider TEXT;
ALTER TABLE conversations ADD COLUMN llm_model TEXT;
ALTER TABLE buds ADD COLUMN llm_fallbacks JSONB NOT NULL DEFAULT '[]';
