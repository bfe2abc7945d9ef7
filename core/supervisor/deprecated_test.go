package supervisor

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestDeprecatedNames: ReasonNotConnected, kept for one release, is the
// same word as ReasonServerUnavailable, its new name. Removing it is a
// deliberate act: this test stops compiling.
func TestDeprecatedNames(t *testing.T) {
	assert.Equal(t, ReasonServerUnavailable, ReasonNotConnected)
}
