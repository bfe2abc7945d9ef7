package httptransport

import (
	"context"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/mcpward/mcpward/conformance"
)

// TestHeaderHelperConformance runs conformance.RunAuthenticator against a
// HeaderHelper whose helper (this test binary) prints a new bearer token
// on each run: a re-authorization is a re-run of the helper. Stall makes
// runs wait while a gate file exists; Exhaust makes every later run fail.
// A helper has no sign-out, so the harness has no SignOut.
func TestHeaderHelperConformance(t *testing.T) {
	conformance.RunAuthenticator(t, func(t *testing.T) conformance.AuthenticatorHarness {
		dir := t.TempDir()
		count, gate, fail := filepath.Join(dir, "count"), filepath.Join(dir, "gate"), filepath.Join(dir, "fail")
		h := newChildHelper(t, childArgv(t, "holdwhile="+gate, "failif="+fail, "count="+count, "seq=Bearer "+helperCanary+"-"),
			HelperOptions{ServerID: helperReq.ServerID})
		_, err := h.Headers(context.Background(), helperReq) // signed in: the first run
		require.NoError(t, err)
		return conformance.AuthenticatorHarness{
			Auth:    h,
			Request: helperReq,
			Reauths: func() int { return runCount(t, count) - 1 },
			Stall: func() func() {
				require.NoError(t, os.WriteFile(gate, nil, 0o600))
				var once sync.Once
				return func() { once.Do(func() { _ = os.Remove(gate) }) }
			},
			Exhaust: func() { require.NoError(t, os.WriteFile(fail, nil, 0o600)) },
		}
	})
}
