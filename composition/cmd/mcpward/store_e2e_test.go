package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpward/mcpward/adapters/pgstore"
	"github.com/mcpward/mcpward/composition/internal/pgtest"
)

// dsnCanary is the password planted in every DSN of these tests; no
// output may contain it.
const dsnCanary = "cnry-dsn-pass-4b1d"

// keyFile is a key file of two keys, the first current.
const keyFile = "# mcpward shared store keys\nk2 " + "1f1e1d1c1b1a191817161514131211100f0e0d0c0b0a09080706050403020100" +
	"\n\nk1 000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f\n"

// storeWorld is a world with the key file at $ROOT/store.key (mode 0600).
func storeWorld(t *testing.T, vars ...string) *world {
	w := newWorld(t, map[string]string{
		"config/mcpward/mcp.json": `{"mcpServers": {"files": {"command": "files-mcp"}}}`,
		"store.key":               keyFile,
	}, vars...)
	return w
}

// noCanary fails when r's output holds the DSN's password.
func noCanary(t *testing.T, args []string, r result) {
	t.Helper()
	assert.NotContains(t, r.stdout+r.stderr, dsnCanary, "mcpward %s", strings.Join(args, " "))
	assert.NotContains(t, r.stdout+r.stderr, "cnry", "mcpward %s", strings.Join(args, " "))
}

// TestSharedStoreDoctor: with --store (or MCPWARD_STORE) and a key file,
// the run uses the shared profile; doctor probes the store (reachable,
// schema version, key checked) and shows the DSN with its password
// masked, in text and --json.
func TestSharedStoreDoctor(t *testing.T) {
	dsn, _ := pgtest.Need(t)
	dsn += " password=" + dsnCanary // trust auth: the password is not asked for
	for _, how := range []string{"flag", "env"} {
		t.Run(how, func(t *testing.T) {
			var w *world
			var base []string
			if how == "flag" {
				w = storeWorld(t)
				base = []string{"--store", dsn, "--store-key-file", "$ROOT/store.key"}
			} else {
				w = storeWorld(t, "MCPWARD_STORE="+dsn)
				w.env = append(w.env, "MCPWARD_STORE_KEY_FILE="+filepath.Join(w.root, "store.key"))
			}
			args := append(append([]string{}, base...), "doctor")
			r := w.run(t, args...)
			noCanary(t, args, r)
			require.Equal(t, 0, r.code, "stdout: %s\nstderr: %s", r.stdout, r.stderr)
			assert.Contains(t, r.stdout, "profile       shared")
			assert.Contains(t, r.stdout, "password=xxxxx")
			assert.Contains(t, r.stdout, "reachable, schema mcpward version ")
			assert.Contains(t, r.stdout, "key k2 checked")
			assert.Contains(t, r.stdout, "approvals ok, audit ok, tokens ok, locks ok")

			args = append(append([]string{}, base...), "doctor", "--json")
			r = w.run(t, args...)
			noCanary(t, args, r)
			require.Equal(t, 0, r.code, "stdout: %s\nstderr: %s", r.stdout, r.stderr)
			var d struct {
				Profile string `json:"profile"`
				Store   struct {
					DSN           string `json:"dsn"`
					OK            bool   `json:"ok"`
					SchemaVersion int    `json:"schemaVersion"`
					KeyID         string `json:"keyId"`
				} `json:"store"`
			}
			require.NoError(t, json.Unmarshal([]byte(r.stdout), &d))
			assert.Equal(t, "shared", d.Profile)
			assert.True(t, d.Store.OK)
			assert.Equal(t, pgstore.SchemaVersion(), d.Store.SchemaVersion)
			assert.Equal(t, "k2", d.Store.KeyID)

			// The approval goes to the shared store, read back by a later run.
			args = append(append([]string{}, base...), "approve", "files")
			r = w.run(t, args...)
			noCanary(t, args, r)
			args = append(append([]string{}, base...), "list")
			r = w.run(t, args...)
			noCanary(t, args, r)
			require.Equal(t, 0, r.code, "stdout: %s\nstderr: %s", r.stdout, r.stderr)
			assert.NotContains(t, r.stdout, "needs approval")
			_, err := os.Stat(filepath.Join(w.root, "state", "mcpward", "store"))
			assert.True(t, os.IsNotExist(err), "no file store is opened with --store")
		})
	}

	// A key file with another key for the id the store knows: refused by
	// name, nothing overwritten.
	w := storeWorld(t)
	w.write(t, "store.key", "k2 "+strings.Repeat("ab", 32)+"\n")
	args := []string{"--store", dsn, "--store-key-file", "$ROOT/store.key", "doctor"}
	r := w.run(t, args...)
	noCanary(t, args, r)
	assert.Equal(t, 1, r.code)
	assert.Contains(t, r.stdout, "store shared: store_key_mismatch")
}

// TestSharedStoreRefusedByName: each way the shared store cannot be used
// is a named finding of doctor with its fix and an error of every other
// command; the DSN's password is never shown; there is no fallback to
// files.
func TestSharedStoreRefusedByName(t *testing.T) {
	down := "postgres://agent:" + dsnCanary + "@127.0.0.1:1/mcpward?sslmode=disable&connect_timeout=2"
	tests := []struct {
		name   string
		args   []string
		env    []string
		setup  func(t *testing.T, w *world)
		reason string
		fix    string
	}{
		{name: "database down", args: []string{"--store", down, "--store-key-file", "$ROOT/store.key"},
			reason: "store_unavailable", fix: "check that the database is up"},
		{name: "database down, from the environment", env: []string{"MCPWARD_STORE=" + down, "MCPWARD_STORE_KEY_FILE=store.key"},
			setup:  func(t *testing.T, w *world) { w.write(t, "ws/store.key", keyFile) },
			reason: "store_unavailable", fix: "check that the database is up"},
		{name: "no key file", args: []string{"--store", down},
			reason: "store_key_missing", fix: "--store-key-file"},
		{name: "key file open to others", args: []string{"--store", down, "--store-key-file", "$ROOT/store.key"},
			setup:  func(t *testing.T, w *world) { require.NoError(t, os.Chmod(filepath.Join(w.root, "store.key"), 0o644)) },
			reason: "store_key_exposed", fix: "chmod 600"},
		{name: "key file malformed", args: []string{"--store", down, "--store-key-file", "$ROOT/store.key"},
			setup:  func(t *testing.T, w *world) { w.write(t, "store.key", "k1 "+dsnCanary+"\n") },
			reason: "store_key_invalid", fix: "64 hexadecimal digits"},
		{name: "key file missing", args: []string{"--store", down, "--store-key-file", "$ROOT/none.key"},
			reason: "store_key_unreadable", fix: "path"},
		{name: "environment DSN of another scheme", env: []string{"MCPWARD_STORE=mysql://u:" + dsnCanary + "@h/db"},
			reason: "store_dsn_invalid", fix: "postgres:// URL"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := storeWorld(t, tt.env...)
			if tt.setup != nil {
				tt.setup(t, w)
			}
			args := append(append([]string{}, tt.args...), "doctor")
			r := w.run(t, args...)
			noCanary(t, args, r)
			assert.Equal(t, 1, r.code)
			assert.Contains(t, r.stdout, "store shared: "+tt.reason)
			assert.Contains(t, r.stdout, "fix: ")
			assert.Contains(t, r.stdout, tt.fix)
			assert.Contains(t, r.stdout, "FAILED ("+tt.reason+")")

			args = append(append([]string{}, tt.args...), "doctor", "--json")
			r = w.run(t, args...)
			noCanary(t, args, r)
			assert.Equal(t, 1, r.code)
			assert.Contains(t, r.stdout, `"reason": "`+tt.reason+`"`)

			for _, j := range []string{"", "--json"} {
				args = append(append([]string{}, tt.args...), "list")
				if j != "" {
					args = append(args, j)
				}
				r = w.run(t, args...)
				noCanary(t, args, r)
				assert.Equal(t, 1, r.code)
				assert.Contains(t, r.stdout+r.stderr, tt.reason)
			}
			_, err := os.Stat(filepath.Join(w.root, "state", "mcpward", "store"))
			assert.True(t, os.IsNotExist(err), "no fallback to files")
		})
	}

	// A --store value that is no DSN is a usage error that does not echo it.
	w := storeWorld(t)
	args := []string{"--store", "mysql://u:" + dsnCanary + "@h/db", "list"}
	r := w.run(t, args...)
	noCanary(t, args, r)
	assert.Equal(t, 2, r.code)
	assert.Contains(t, r.stderr, "invalid value for --store")
}

// TestSharedStoreReplay is issue 22's attack 5 through the CLI: a
// database writer without the store key saves the approval row of a
// project server, waits for "revoke", and inserts the row again. The
// server stays unapproved (never "allowed approved"), doctor names the
// replay with its server and what to do (exit 1, never "approvals ok"),
// and "revoke NAME" removes the replayed row, after which doctor is clean
// and the server can be approved again.
func TestSharedStoreReplay(t *testing.T) {
	dsn, _ := pgtest.Need(t)
	ctx := t.Context()
	admin, err := pgx.Connect(ctx, dsn)
	require.NoError(t, err)
	defer admin.Close(context.Background())
	db := fmt.Sprintf("replay_%d", os.Getpid())
	_, err = admin.Exec(ctx, "CREATE DATABASE "+db)
	require.NoError(t, err)
	dsn = strings.Replace(dsn, "dbname=postgres", "dbname="+db, 1)
	require.Contains(t, dsn, "dbname="+db)
	dbAdmin, err := pgx.Connect(ctx, dsn)
	require.NoError(t, err)
	defer dbAdmin.Close(context.Background())

	w := newWorld(t, map[string]string{
		"ws/.mcp.json":   `{"mcpServers": {"weather": {"command": "weather-mcp", "args": ["--units", "metric"]}}}`,
		"ws/.git/config": gitConfig,
		"store.key":      keyFile,
	})
	base := []string{"--store", dsn, "--store-key-file", "$ROOT/store.key"}
	run := func(args ...string) result {
		t.Helper()
		return w.run(t, append(append([]string{}, base...), args...)...)
	}
	r := run("approve", "weather")
	require.Equal(t, 0, r.code, "stdout: %s\nstderr: %s", r.stdout, r.stderr)
	assert.Contains(t, run("list").stdout, "allowed")

	var saved string
	require.NoError(t, dbAdmin.QueryRow(ctx, `SELECT jsonb_agg(to_jsonb(x))::text FROM mcpward.approvals x`).Scan(&saved))
	r = run("revoke", "weather")
	require.Equal(t, 0, r.code, "stdout: %s\nstderr: %s", r.stdout, r.stderr)
	assert.Contains(t, run("list").stdout, "not_approved")
	_, err = dbAdmin.Exec(ctx, `INSERT INTO mcpward.approvals SELECT * FROM jsonb_populate_recordset(NULL::mcpward.approvals, $1::jsonb)`, saved)
	require.NoError(t, err)

	r = run("list")
	t.Logf("list after the replay:\n%s%s", r.stdout, r.stderr)
	assert.NotContains(t, r.stdout, " approved ", "the replayed approval is never used")
	assert.NotContains(t, r.stdout, "allowed", "the replayed approval is never used")
	r = run("doctor")
	assert.Equal(t, 1, r.code, "stdout: %s", r.stdout)
	assert.NotContains(t, r.stdout, "approvals ok")
	assert.Contains(t, r.stdout, "approvals FAILED (approval_replayed)")
	assert.Contains(t, r.stdout, "an approval of weather in the shared store was revoked or replaced, then put back")
	assert.Contains(t, r.stdout, `mcpward revoke weather`)
	r = run("doctor", "--json")
	assert.Equal(t, 1, r.code)
	assert.Contains(t, r.stdout, `"reason": "approval_replayed"`)

	r = run("revoke", "weather")
	require.Equal(t, 0, r.code, "stdout: %s\nstderr: %s", r.stdout, r.stderr)
	r = run("doctor")
	assert.Contains(t, r.stdout, "approvals ok", "stdout: %s", r.stdout)
	assert.Contains(t, run("list").stdout, "not_approved")
	require.Equal(t, 0, run("approve", "weather").code)
	assert.Contains(t, run("list").stdout, "allowed")
}
