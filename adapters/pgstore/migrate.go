package pgstore

import (
	"context"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"slices"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5"
)

// migrationFiles are the schema migrations, one file per version:
// migrations/NNNN_name.sql, applied in order, each once.
//
//go:embed migrations/*.sql
var migrationFiles embed.FS

// migration is one embedded schema version.
type migration struct {
	version int
	sql     string
}

// migrations returns the embedded migrations in version order. The
// versions are 1, 2, ... with no gap (a test checks it).
func migrations() []migration {
	entries, err := fs.ReadDir(migrationFiles, "migrations")
	if err != nil {
		panic("pgstore: embedded migrations unreadable")
	}
	var out []migration
	for _, e := range entries {
		num, _, ok := strings.Cut(e.Name(), "_")
		v, err := strconv.Atoi(num)
		if !ok || err != nil || !strings.HasSuffix(e.Name(), ".sql") {
			panic("pgstore: bad migration file name " + e.Name())
		}
		b, err := migrationFiles.ReadFile("migrations/" + e.Name())
		if err != nil {
			panic("pgstore: embedded migration unreadable")
		}
		out = append(out, migration{version: v, sql: string(b)})
	}
	slices.SortFunc(out, func(a, b migration) int { return a.version - b.version })
	return out
}

// SchemaVersion is the schema version this package writes and reads: the
// highest embedded migration.
func SchemaVersion() int {
	m := migrations()
	return m[len(m)-1].version
}

// migrate brings the schema to SchemaVersion in one transaction, holding a
// transaction-level advisory lock of the schema so that Stores opening at
// the same time apply each migration exactly once (the others wait, then
// find nothing to do). A schema at a higher version than SchemaVersion is
// refused (ReasonSchemaTooNew) and left untouched. The schema is created
// only when missing, so a role without CREATE on the database can use a
// schema an administrator created for it.
func (s *Store) migrate(ctx context.Context) error {
	all := migrations()
	latest := all[len(all)-1].version
	schemaIdent := pgx.Identifier{s.schema}.Sanitize()
	versions := pgx.Identifier{s.schema, "schema_migrations"}.Sanitize()
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock($1)`, advisoryID("migrate", s.schema, "")); err != nil {
			return dbFail(err, "migration lock")
		}
		var exists bool
		if err := tx.QueryRow(ctx, `SELECT to_regnamespace($1) IS NOT NULL`, schemaIdent).Scan(&exists); err != nil {
			return dbFail(err, "migration")
		}
		if !exists {
			if _, err := tx.Exec(ctx, `CREATE SCHEMA `+schemaIdent); err != nil {
				return dbFail(err, "create schema")
			}
		}
		if err := tx.QueryRow(ctx, `SELECT to_regclass($1) IS NOT NULL`, versions).Scan(&exists); err != nil {
			return dbFail(err, "migration")
		}
		if !exists {
			if _, err := tx.Exec(ctx, `CREATE TABLE `+versions+` (
				version    integer PRIMARY KEY,
				applied_at timestamptz NOT NULL DEFAULT now()
			)`); err != nil {
				return dbFail(err, "migration")
			}
		}
		var current int
		if err := tx.QueryRow(ctx, `SELECT coalesce(max(version), 0) FROM `+versions).Scan(&current); err != nil {
			return dbFail(err, "migration")
		}
		if current > latest {
			return fail(ReasonSchemaTooNew, fmt.Sprintf("the schema is at version %d, this package knows up to %d", current, latest))
		}
		for _, m := range all {
			if m.version <= current {
				continue
			}
			if _, err := tx.Exec(ctx, `SET LOCAL search_path TO `+schemaIdent); err != nil {
				return dbFail(err, "migration")
			}
			if _, err := tx.Exec(ctx, m.sql); err != nil {
				return dbFail(err, "migration")
			}
			if _, err := tx.Exec(ctx, `INSERT INTO `+versions+` (version) VALUES ($1)`, m.version); err != nil {
				return dbFail(err, "migration")
			}
		}
		return nil
	})
	if err == nil {
		return nil
	}
	var e *Error
	if errors.As(err, &e) {
		return e
	}
	return dbFail(err, "migration")
}
