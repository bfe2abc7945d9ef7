package toolcall

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/mcpward/mcpward/core/catalog"
)

// TestDeprecatedNames: ReasonUnknownTool, kept for one release, is the
// same word as catalog.ReasonUnknownTool, its one home. Removing it is a
// deliberate act: this test stops compiling.
func TestDeprecatedNames(t *testing.T) {
	assert.Equal(t, catalog.ReasonUnknownTool, ReasonUnknownTool)
}
