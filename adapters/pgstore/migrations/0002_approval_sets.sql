-- mcpward pgstore schema, version 2: the approvals the store holds now,
-- authenticated as one set, so a revoked approval put back by someone who
-- can write the database but has no key is refused (see doc.go, Replay).
-- Applied inside one transaction with search_path set to the store's
-- schema (see migrate.go). The set of approvals already stored is adopted
-- by Open, with the key (see adopt.go).

-- approval_sets: per server, the approvals the store holds now: members is
-- the concatenation, sorted, of each approval's id_hash and the SHA-256 of
-- its record (64 bytes each); digest is the SHA-256 of members.
CREATE TABLE approval_sets (
	server_hash bytea PRIMARY KEY,
	members     bytea NOT NULL,
	digest      bytea NOT NULL
);

-- audit: the approvals' sequence number at the time of each record
-- appended from this version on (its chain MAC covers it); NULL for the
-- records of version 1.
ALTER TABLE audit ADD COLUMN approvals_seq bigint;

-- audit_head: the approvals' state (a sequence number every grant and
-- revoke advances, and the digest of every server's set), and head_mac,
-- the MAC of the whole head row under key_id. NULL until Open adopts the
-- approvals stored before this version.
ALTER TABLE audit_head
	ADD COLUMN approvals_seq    bigint,
	ADD COLUMN approvals_digest bytea,
	ADD COLUMN key_id           text,
	ADD COLUMN head_mac         bytea;
