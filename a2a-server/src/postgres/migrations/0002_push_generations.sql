-- A2A 1.1: a webhook registered by a 1.1 request gets each task event with its generation.
ALTER TABLE a2a_push_configs ADD COLUMN generations boolean NOT NULL DEFAULT false;
