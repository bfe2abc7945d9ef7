package shared

import (
	"os"
	"testing"

	"github.com/mcpward/mcpward/composition/internal/pgtest"
)

func TestMain(m *testing.M) {
	code := m.Run()
	pgtest.Stop() // the PostgreSQL cluster, if a test started one
	os.Exit(code)
}
