package shared

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpward/mcpward/composition"
	"github.com/mcpward/mcpward/composition/internal/pgtest"
	"github.com/mcpward/mcpward/ports"
)

// TestDeprecatedNew: New, kept for one release, is Open with its
// arguments in a Config: the same signature it always had, and the same
// outcome (here, a store refused before any database is reached).
func TestDeprecatedNew(t *testing.T) {
	var newFn func(context.Context, Store, ports.WorkspaceTrust, composition.Config) (*composition.Host, func(), error) = New
	ctx := context.Background()
	store := Store{Keyring: pgtest.Keyring(t)} // no DSN
	_, _, want := Open(ctx, Config{Store: store})
	require.Error(t, want)
	_, _, got := newFn(ctx, store, nil, composition.Config{})
	assert.Equal(t, want, got)
}
