package oauth

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpward/mcpward/core/refusal"
	"github.com/mcpward/mcpward/ports"
)

func TestStoreKeyBindsServerAndURL(t *testing.T) {
	a := storeKey("notes", "https://notes.example.com/mcp")
	assert.NotEqual(t, a, storeKey("notes", "https://evil.example.com/mcp"), "another URL under the same id")
	assert.NotEqual(t, a, storeKey("other", "https://notes.example.com/mcp"), "the same URL under another id")
	assert.NotEqual(t, storeKey("a/b", "u"), storeKey("a", "b/u"), "ids are escaped")
	assert.NotEqual(t, a, lockKey("notes", "https://notes.example.com/mcp"))
	long := strings.Repeat("%", 2000)
	assert.LessOrEqual(t, len(lockKey(long, "u")), ports.MaxKeyLen, "a long id is hashed")
	assert.NotEqual(t, storeKey(long, "u"), storeKey(long+"x", "u"))
}

func TestLoadSave(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	r, err := e.c.load(ctx, "srv", e.as.MCP())
	require.NoError(t, err)
	assert.Nil(t, r, "nothing stored")

	rec := &record{Server: "srv", Resource: e.as.MCP(), Issuer: e.as.URL(), TokenEndpoint: e.as.URL() + "/token", ClientID: "c", AccessToken: "a-" + canary}
	require.NoError(t, e.c.save(ctx, rec))
	got, err := e.c.load(ctx, "srv", e.as.MCP())
	require.NoError(t, err)
	assert.Equal(t, rec.AccessToken, got.AccessToken)
	assert.Equal(t, recordVersion, got.Version)

	t.Run("a record of another server under the key is corrupt", func(t *testing.T) {
		other := *rec
		other.Server = "other"
		b := mustJSON(t, other)
		require.NoError(t, e.store.Set(ctx, storeKey("srv", e.as.MCP()), b))
		_, err := e.c.load(ctx, "srv", e.as.MCP())
		assert.Equal(t, ReasonCredentialCorrupt, refusal.ReasonOf(err))
		requireNoCanary(t, err)
	})
	t.Run("garbage is corrupt", func(t *testing.T) {
		require.NoError(t, e.store.Set(ctx, storeKey("srv", e.as.MCP()), []byte("{"+canary)))
		_, err := e.c.load(ctx, "srv", e.as.MCP())
		assert.Equal(t, ReasonCredentialCorrupt, refusal.ReasonOf(err))
		requireNoCanary(t, err)
	})
	t.Run("store failures", func(t *testing.T) {
		e.store.Fail("Get", ports.ErrUnavailable)
		_, err := e.c.load(ctx, "srv", e.as.MCP())
		assert.Equal(t, ReasonStoreUnavailable, refusal.ReasonOf(err))
		e.store.Fail("Get", ports.ErrCorrupt)
		_, err = e.c.load(ctx, "srv", e.as.MCP())
		assert.Equal(t, ReasonCredentialCorrupt, refusal.ReasonOf(err))
		e.store.Fail("Set", ports.ErrCorrupt)
		assert.Equal(t, ReasonCredentialCorrupt, refusal.ReasonOf(e.c.save(ctx, rec)))
		e.store.Fail("Set", ports.ErrUnavailable)
		assert.Equal(t, ReasonStoreUnavailable, refusal.ReasonOf(e.c.save(ctx, rec)))
		e.store.Clear()
	})
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	require.NoError(t, err)
	return b
}

func TestSaveLocked(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	rec := &record{Server: "srv", Resource: e.as.MCP(), TokenEndpoint: e.as.URL() + "/token", AccessToken: "a"}
	require.NoError(t, e.c.saveLocked(ctx, rec, nil))
	assert.False(t, e.locker.Held(lockKey("srv", e.as.MCP())), "released")

	unlock, err := e.locker.Lock(ctx, lockKey("srv", e.as.MCP()))
	require.NoError(t, err)
	short, cancel := context.WithTimeout(ctx, 20*time.Millisecond)
	defer cancel()
	rec2 := *rec
	rec2.AccessToken = "b"
	assert.Equal(t, ReasonLockTimeout, refusal.ReasonOf(e.c.saveLocked(short, &rec2, nil)), "a refresh holds the lock: nothing is saved")
	got, err := e.c.load(ctx, "srv", e.as.MCP())
	require.NoError(t, err)
	assert.Equal(t, "a", got.AccessToken)
	require.NoError(t, unlock())

	e.locker.Fail("Lock", ports.ErrUnavailable)
	assert.Equal(t, ReasonStoreUnavailable, refusal.ReasonOf(e.c.saveLocked(ctx, &rec2, nil)))
	e.locker.Clear()
}
