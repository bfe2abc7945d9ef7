//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package filestore

import (
	"encoding/json"
	"regexp"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpward/mcpward/ports"
)

var nameRE = regexp.MustCompile(`^(k[a-z2-7]{0,240}|h[0-9a-f]{64})$`)

func FuzzKeyName(f *testing.F) {
	for _, k := range nastyKeys {
		f.Add(k.key, k.key+"x")
	}
	f.Fuzz(func(t *testing.T, a, b string) {
		if checkKey(a) != nil || checkKey(b) != nil {
			return
		}
		na, nb := keyName(a), keyName(b)
		require.Regexp(t, nameRE, na)
		require.Regexp(t, nameRE, nb)
		if a != b {
			require.NotEqual(t, na, nb, "keys alias")
		} else {
			require.Equal(t, na, nb)
		}
	})
}

func FuzzTokenFile(f *testing.F) {
	f.Add([]byte(nil), "k", []byte("v"))
	f.Add(encodeToken("key", []byte("value")), "key", []byte{})
	f.Fuzz(func(t *testing.T, raw []byte, key string, value []byte) {
		// Arbitrary bytes: no panic, and whatever decodes re-encodes to
		// exactly the same file (no two files read as the same content).
		if k, v, err := decodeToken(raw); err == nil {
			require.Equal(t, raw, encodeToken(k, v))
		}
		if checkKey(key) != nil || len(value) > ports.MaxValueLen {
			return
		}
		k, v, err := decodeToken(encodeToken(key, value))
		require.NoError(t, err)
		assert.Equal(t, key, k)
		assert.True(t, string(value) == string(v))
	})
}

func FuzzApprovalsFile(f *testing.F) {
	valid, _ := encodeApprovals([]ports.Approval{{Identity: ident("a\xff", "1"), GrantedBy: "cli"}})
	f.Add(valid)
	f.Add([]byte(`{"version":1,"approvals":null}`))
	f.Fuzz(func(t *testing.T, raw []byte) {
		list, err := decodeApprovals(raw)
		if err != nil {
			return
		}
		// Whatever is accepted survives a rewrite unchanged.
		again, err := encodeApprovals(list)
		require.NoError(t, err)
		list2, err := decodeApprovals(again)
		require.NoError(t, err)
		require.Equal(t, len(list), len(list2))
		for i := range list {
			require.Equal(t, list[i].Identity, list2[i].Identity)
			require.Equal(t, list[i].GrantedBy, list2[i].GrantedBy)
			require.True(t, list[i].GrantedAt.Equal(list2[i].GrantedAt))
		}
	})
}

func FuzzAuditLog(f *testing.F) {
	line, _ := encodeRecord(ports.AuditRecord{Action: ports.AuditDecide, Reason: "x\xff"})
	f.Add(line)
	f.Add(append(line, line[:5]...))
	f.Fuzz(func(t *testing.T, raw []byte) {
		recs, err := decodeAudit(raw)
		if err != nil {
			require.Nil(t, recs)
			return
		}
		for _, r := range recs {
			l, err := encodeRecord(r)
			require.NoError(t, err)
			back, err := decodeAudit(l)
			require.NoError(t, err)
			require.Len(t, back, 1)
			require.Equal(t, r.Identity, back[0].Identity)
			require.Equal(t, r.Reason, back[0].Reason)
		}
	})
}

// FuzzEncodeRecord holds encodeRecord to the bytes encoding/json writes
// for the same fileRecord (the format every earlier line was written in),
// for any strings (invalid UTF-8, controls, HTML characters, U+2028) and
// any time, its error included.
func FuzzEncodeRecord(f *testing.F) {
	f.Add(int64(1796000000), int64(123456789), "call", "example", "user", "/home/u/.mcp.json", "sha256:0", "", "", "", "started", "call=ab.1 tool=echo args_bytes=20", "serve")
	f.Add(int64(-62135596801), int64(0), "decide", "a<b>&c", "x\xff", "\u2028\t\n\"\\", "\x00\x7f", "é", "\xed\xa0\x80", "b64", "", "", "")
	f.Add(int64(253402300800), int64(1), "", "", "", "", "", "", "", "", "", "", "")
	f.Fuzz(func(t *testing.T, sec, nsec int64, action, server, tier, origin, fp, security, repo, gen, outcome, reason, actor string) {
		r := ports.AuditRecord{Time: time.Unix(sec, nsec), Action: ports.AuditAction(action),
			Identity: ports.Identity{ServerID: server, Tier: ports.Tier(tier), Origin: origin, Fingerprint: fp,
				Security: security, Repository: repo, Generation: gen},
			Outcome: outcome, Reason: reason, Actor: actor}
		want, werr := json.Marshal(fileRecord{Time: utcTime(r.Time), Action: bstr(r.Action), Identity: toFileIdentity(r.Identity),
			Outcome: bstr(r.Outcome), Reason: bstr(r.Reason), Actor: bstr(r.Actor)})
		got, gerr := encodeRecord(r)
		if werr != nil {
			require.Error(t, gerr, "json.Marshal refused the record")
			return
		}
		require.NoError(t, gerr)
		require.Equal(t, string(append(want, '\n')), string(got))
	})
}
