package app

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpward/mcpward/core/refusal"
)

func TestReadKeyFile(t *testing.T) {
	const secretHex = "c0ffee0000000000000000000000000000000000000000000000000000c0ffee"
	hexOf := func(b byte) string {
		return strings.Repeat(string("0123456789abcdef"[b>>4])+string("0123456789abcdef"[b&15]), 32)
	}
	tests := []struct {
		name    string
		content string
		mode    os.FileMode
		dir     bool
		reason  string
		current string
	}{
		{name: "one key", content: "k1 " + secretHex + "\n", mode: 0o600, current: "k1"},
		{name: "comments, blank lines, rotation", content: "# keys\n\nk2 " + hexOf(2) + "\n  k1 " + hexOf(1) + "  \n", mode: 0o400, current: "k2"},
		{name: "open to group", content: "k1 " + secretHex + "\n", mode: 0o640, reason: ReasonStoreKeyExposed},
		{name: "open to others", content: "k1 " + secretHex + "\n", mode: 0o604, reason: ReasonStoreKeyExposed},
		{name: "short key", content: "k1 " + secretHex[:62] + "\n", mode: 0o600, reason: ReasonStoreKeyInvalid},
		{name: "not hex", content: "k1 " + strings.Repeat("zz", 32) + "\n", mode: 0o600, reason: ReasonStoreKeyInvalid},
		{name: "no id", content: secretHex + "\n", mode: 0o600, reason: ReasonStoreKeyInvalid},
		{name: "bad id", content: "k/1 " + secretHex + "\n", mode: 0o600, reason: ReasonStoreKeyInvalid},
		{name: "id twice", content: "k1 " + secretHex + "\nk1 " + hexOf(3) + "\n", mode: 0o600, reason: ReasonStoreKeyInvalid},
		{name: "empty", content: "# nothing\n", mode: 0o600, reason: ReasonStoreKeyInvalid},
		{name: "a directory", dir: true, reason: ReasonStoreKeyUnreadable},
		{name: "absent", reason: ReasonStoreKeyUnreadable},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "store.key")
			switch {
			case tt.dir:
				require.NoError(t, os.Mkdir(path, 0o700))
			case tt.content != "":
				require.NoError(t, os.WriteFile(path, []byte(tt.content), 0o600))
				require.NoError(t, os.Chmod(path, tt.mode))
			}
			ring, id, err := ReadKeyFile(path)
			if tt.reason != "" {
				require.Error(t, err)
				assert.Equal(t, tt.reason, refusal.ReasonOf(err))
				assert.Equal(t, refusal.Config, refusal.ClassOf(err))
				assert.NotContains(t, err.Error(), path, "no path in the error")
				assert.NotContains(t, err.Error(), "c0ffee", "no key in the error")
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.current, id)
			cur, key, err := ring.Current()
			require.NoError(t, err)
			assert.Equal(t, tt.current, cur)
			assert.Len(t, key, 32)
		})
	}
}

func TestValidDSN(t *testing.T) {
	for dsn, want := range map[string]bool{
		"postgres://agent@db/mcpward":                true,
		"postgresql://agent@db/mcpward":              true,
		"host=db dbname=mcpward sslmode=verify-full": true,
		"mysql://agent@db/x":                         false,
		"file:///etc/passwd":                         false,
		"db.example.com":                             false,
		"":                                           false,
	} {
		assert.Equal(t, want, ValidDSN(dsn), dsn)
	}
}
