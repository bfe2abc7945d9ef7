package activation

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpward/mcpward/ports"
)

// TestPreview: the same decision as Decide, recorded nowhere — even with
// an audit log that fails, which Decide would turn into a denial.
func TestPreview(t *testing.T) {
	for _, tier := range []ports.Tier{ports.TierUser, ports.TierManaged, ports.TierProject, ports.TierLocal} {
		audit := &fakeAudit{}
		d, err := New(Options{Approvals: &fakeStore{}, Audit: audit})
		require.NoError(t, err)
		want, werr := d.Decide(context.Background(), subj(tier))
		recorded := len(audit.all())
		got, gerr := d.Preview(context.Background(), subj(tier))
		assert.Equal(t, want, got, tier)
		assert.Equal(t, werr == nil, gerr == nil, tier)
		assert.Len(t, audit.all(), recorded, "Preview appended a record (%s)", tier)
	}
	audit := &fakeAudit{err: assert.AnError}
	d, err := New(Options{Approvals: &fakeStore{}, Audit: audit})
	require.NoError(t, err)
	dec, err := d.Preview(context.Background(), subj(ports.TierUser))
	require.NoError(t, err)
	assert.True(t, dec.Allowed, "nothing recorded, nothing to fail")
}
