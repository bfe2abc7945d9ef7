package mcpserve

import (
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// fixedSealer is a sealer whose clock stands at now.
func fixedSealer(now time.Time) *sealer {
	return newSealer(func() time.Time { return now })
}

// randomState is a sealedState of random fields (any bytes, any lengths
// within the bounds), expiring after now.
func randomState(r *rand.Rand, now time.Time) sealedState {
	field := func(max int) string {
		b := make([]byte, r.IntN(max+1))
		for i := range b {
			b[i] = byte(r.IntN(256))
		}
		return string(b)
	}
	return sealedState{Server: field(40), Method: field(12), Name: field(64), Upstream: field(300),
		Expiry: now.Add(time.Duration(1+r.IntN(3600)) * time.Second).Truncate(time.Millisecond)}
}

// TestSealOpens: over generated states, what is sealed opens to the same
// fields, the upstream state byte for byte; sealing is canonical (the
// same state seals to the same string) and stays within MaxSealedState.
func TestSealOpens(t *testing.T) {
	now := time.Unix(1_800_000_000, 0)
	s := fixedSealer(now)
	r := rand.New(rand.NewPCG(1, 2))
	for range 500 {
		st := randomState(r, now)
		tok, err := s.seal(st)
		require.NoError(t, err)
		assert.True(t, sealed(tok))
		got, err := s.open(tok)
		require.NoError(t, err)
		assert.Equal(t, st.Server, got.Server)
		assert.Equal(t, st.Method, got.Method)
		assert.Equal(t, st.Name, got.Name)
		assert.Equal(t, st.Upstream, got.Upstream)
		assert.True(t, st.Expiry.Equal(got.Expiry))
		again, _ := s.seal(got)
		assert.Equal(t, tok, again)
	}
	big, err := s.seal(sealedState{Server: strings.Repeat("s", maxSealedName), Method: strings.Repeat("m", maxSealedName),
		Name: strings.Repeat("n", maxSealedName), Upstream: strings.Repeat("u", MaxUpstreamState), Expiry: now.Add(time.Hour)})
	require.NoError(t, err)
	assert.LessOrEqual(t, len(big), MaxSealedState, "the largest state this serve seals, it also opens")
	_, err = s.open(big)
	assert.NoError(t, err)
}

// TestSealRefusals: a state altered in any one byte, cut, lengthened
// (the conformance suite's "-TAMPERED"), sealed under another key (a
// restarted serve, another serve), expired, or over the bound is refused
// with its reason; a field over its bound is not sealed.
func TestSealRefusals(t *testing.T) {
	now := time.Unix(1_800_000_000, 0)
	s := fixedSealer(now)
	st := sealedState{Server: "everything", Method: methodCall, Name: "ask", Upstream: "round=1", Expiry: now.Add(time.Minute)}
	tok, err := s.seal(st)
	require.NoError(t, err)
	reason := func(tok string) string {
		_, err := s.open(tok)
		require.Error(t, err)
		return stateReason(err)
	}
	for i := range len(tok) {
		for _, c := range []byte{'A', '_', '-', '0', '.', 0} {
			if tok[i] == c {
				continue
			}
			b := []byte(tok)
			b[i] = c
			assert.Equal(t, ReasonStateInvalid, reason(string(b)), "byte %d altered to %q", i, c)
		}
	}
	for n := range len(tok) {
		assert.Equal(t, ReasonStateInvalid, reason(tok[:n]), "cut to %d bytes", n)
	}
	assert.Equal(t, ReasonStateInvalid, reason(tok+"-TAMPERED"))
	assert.Equal(t, ReasonStateInvalid, reason(tok+"A"))
	assert.Equal(t, ReasonStateInvalid, reason("round=1"), "the upstream's own state is not serve's")
	other := fixedSealer(now)
	fromOther, err := other.seal(st)
	require.NoError(t, err)
	assert.Equal(t, ReasonStateInvalid, reason(fromOther), "sealed under another key")

	late := fixedSealer(now)
	late.key = s.key
	late.now = func() time.Time { return now.Add(time.Minute) }
	_, err = late.open(tok)
	assert.Equal(t, ReasonStateExpired, stateReason(err), "at its expiry")
	assert.Equal(t, ReasonStateTooLarge, reason(sealedPrefix+strings.Repeat("A", MaxSealedState)))

	_, err = s.seal(sealedState{Upstream: strings.Repeat("u", MaxUpstreamState+1), Expiry: now.Add(time.Minute)})
	assert.Equal(t, ReasonStateTooLarge, stateReason(err))
	_, err = s.seal(sealedState{Name: strings.Repeat("n", maxSealedName+1), Expiry: now.Add(time.Minute)})
	assert.Equal(t, ReasonStateTooLarge, stateReason(err))
}

// FuzzOpenState feeds open any string: it never panics, refuses with a
// reason word, and what it opens is exactly what this key sealed (it
// re-seals to the same string).
func FuzzOpenState(f *testing.F) {
	now := time.Unix(1_800_000_000, 0)
	s := fixedSealer(now)
	s.key = [32]byte{1, 2, 3}
	for _, st := range []sealedState{
		{Server: "a", Method: methodCall, Name: "t", Upstream: "x", Expiry: now.Add(time.Minute)},
		{Expiry: now.Add(time.Hour)},
		{Server: "a", Method: methodPrompt, Name: "p", Upstream: strings.Repeat("z", 100), Expiry: now.Add(-time.Minute)},
	} {
		tok, err := s.seal(st)
		require.NoError(f, err)
		f.Add(tok)
		f.Add(tok + "-TAMPERED")
	}
	f.Add("")
	f.Add(sealedPrefix)
	f.Add(sealedPrefix + "AQ")
	f.Fuzz(func(t *testing.T, tok string) {
		st, err := s.open(tok)
		if err != nil {
			switch stateReason(err) {
			case ReasonStateInvalid, ReasonStateExpired, ReasonStateTooLarge:
			default:
				t.Fatalf("refused without a reason word: %v", err)
			}
			return
		}
		again, err := s.seal(st)
		require.NoError(t, err)
		require.Equal(t, tok, again, "an opened state is one this key sealed")
	})
}
