package pgstore

import (
	"bytes"
	"crypto/sha256"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpward/mcpward/ports"
)

// TestMigrationsContiguous: the embedded versions are 1..N, each once.
func TestMigrationsContiguous(t *testing.T) {
	for i, m := range migrations() {
		require.Equal(t, i+1, m.version, "migration versions are 1, 2, ... with no gap or repeat")
		require.NotEmpty(t, m.sql)
	}
	assert.Equal(t, len(migrations()), SchemaVersion())
}

// TestCodecRoundTrip: every byte string and every instant round-trips.
func TestCodecRoundTrip(t *testing.T) {
	odd := "nul\x00 \xff\xfe invalid \u00e9\U0001F600"
	id := ports.Identity{ServerID: odd, Tier: ports.TierPlugin, Origin: odd, Fingerprint: "", Security: odd, Repository: odd, Generation: odd}
	for _, tm := range []time.Time{{}, time.Unix(0, 1), time.Date(9999, 12, 31, 23, 59, 59, 999999999, time.UTC),
		time.Date(-200, 1, 1, 0, 0, 0, 5, time.FixedZone("x", 3600))} {
		a := ports.Approval{Identity: id, GrantedAt: tm, GrantedBy: odd}
		got, err := decodeApproval(encodeApproval(a))
		require.NoError(t, err)
		assert.Equal(t, a.Identity, got.Identity)
		assert.True(t, a.GrantedAt.Equal(got.GrantedAt), "%v != %v", a.GrantedAt, got.GrantedAt)
		r := ports.AuditRecord{Time: tm, Action: "x\x00", Identity: id, Outcome: odd, Reason: odd, Actor: odd}
		gr, err := decodeRecord(encodeRecord(r))
		require.NoError(t, err)
		assert.True(t, r.Time.Equal(gr.Time))
		gr.Time, r.Time = time.Time{}, time.Time{}
		assert.Equal(t, r, gr)
	}
}

// FuzzDecode: the decoders of stored rows never panic, and what they
// accept re-encodes to the same bytes.
func FuzzDecode(f *testing.F) {
	f.Add(encodeApproval(ports.Approval{GrantedBy: "x"}))
	f.Add(encodeRecord(ports.AuditRecord{Reason: "r"}))
	f.Add([]byte{1, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f})
	f.Fuzz(func(t *testing.T, b []byte) {
		if a, err := decodeApproval(b); err == nil {
			assert.Equal(t, b, encodeApproval(a))
		}
		if r, err := decodeRecord(b); err == nil {
			assert.Equal(t, b, encodeRecord(r))
		}
	})
}

// FuzzMembers: a server's set read from the database is hostile bytes:
// validMembers never panics and accepts only whole, strictly sorted
// entries; on a valid set, with and without keep it valid, find sees
// exactly what with put and without removed, and holds agrees.
func FuzzMembers(f *testing.F) {
	f.Add([]byte{}, []byte("id"), []byte("record"))
	f.Add(make([]byte, entryLen), []byte{0}, []byte{})
	f.Add(make([]byte, 2*entryLen), []byte{1}, []byte("r"))
	f.Fuzz(func(t *testing.T, raw, id, record []byte) {
		if !validMembers(raw) {
			return
		}
		m := members(raw)
		idHash := sha256.Sum256(id)
		w := m.with(idHash[:], record)
		require.True(t, validMembers(w), "with keeps the set valid")
		require.True(t, w.holds(idHash[:], record))
		require.False(t, w.holds(idHash[:], append(bytes.Clone(record), 'x')))
		require.Equal(t, len(m)/entryLen+map[bool]int{true: 0, false: 1}[m.find(idHash[:]) != nil], len(w)/entryLen)
		wo, had := w.without(idHash[:])
		require.True(t, had)
		require.True(t, validMembers(wo))
		require.Nil(t, wo.find(idHash[:]))
		for i := 0; i < len(m); i += entryLen {
			if !bytes.Equal(m[i:i+32], idHash[:]) {
				require.Equal(t, []byte(m[i+32:i+entryLen]), []byte(wo.find(m[i:i+32])), "another member is kept")
			}
		}
	})
}
