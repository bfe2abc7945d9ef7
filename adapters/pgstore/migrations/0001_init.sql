-- mcpward pgstore schema, version 1. Applied inside one transaction with
-- search_path set to the store's schema (see migrate.go).

-- keys: one key check value per key id of the host's Keyring, so a wrong
-- key is named (ReasonKeyMismatch) instead of failing as tampering.
CREATE TABLE keys (
	key_id      text PRIMARY KEY,
	check_value bytea NOT NULL,
	added_at    timestamptz NOT NULL DEFAULT now()
);

-- tokens: TokenStore values, sealed with AES-256-GCM; the key (the record's
-- identity) is the additional data.
CREATE TABLE tokens (
	key        bytea PRIMARY KEY,
	key_id     text NOT NULL,
	nonce      bytea NOT NULL,
	sealed     bytea NOT NULL,
	updated_at timestamptz NOT NULL DEFAULT now()
);

-- approvals: one row per exact identity; seq orders them by grant.
CREATE SEQUENCE approvals_seq;
CREATE TABLE approvals (
	id_hash     bytea PRIMARY KEY,
	server_hash bytea NOT NULL,
	seq         bigint NOT NULL,
	record      bytea NOT NULL,
	key_id      text NOT NULL,
	mac         bytea NOT NULL
);
CREATE INDEX approvals_by_server ON approvals (server_hash, seq);

-- audit: append-only, one row per record, each row's mac chaining the one
-- before it; audit_head holds the end of the chain and the base left by
-- retention (Prune).
CREATE TABLE audit (
	seq         bigint PRIMARY KEY,
	appended_at timestamptz NOT NULL DEFAULT now(),
	record      bytea NOT NULL,
	key_id      text NOT NULL,
	mac         bytea NOT NULL
);
CREATE TABLE audit_head (
	id       int PRIMARY KEY CHECK (id = 1),
	seq      bigint NOT NULL,
	mac      bytea NOT NULL,
	base_seq bigint NOT NULL,
	base_mac bytea NOT NULL
);
INSERT INTO audit_head (id, seq, mac, base_seq, base_mac)
	VALUES (1, 0, '\x0000000000000000000000000000000000000000000000000000000000000000',
	        0, '\x0000000000000000000000000000000000000000000000000000000000000000');
