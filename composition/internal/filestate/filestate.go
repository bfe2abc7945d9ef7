// Package filestate opens the filestore under a state directory for the
// desktop and headless profiles, and holds their Wire provider sets.
package filestate

import (
	"errors"
	"os"
	"path/filepath"

	"github.com/google/wire"
	"github.com/mcpward/mcpward/adapters/filestore"
	"github.com/mcpward/mcpward/core/refusal"
	"github.com/mcpward/mcpward/ports"
)

// StoreSubdir is the subdirectory of a state directory holding the
// filestore.
const StoreSubdir = "store"

// ReasonStateDirUnusable is the reason of the refusal Open returns when
// the state directory cannot be used.
const ReasonStateDirUnusable = "state_dir_unusable"

// Open opens the filestore in dir's StoreSubdir, creating dir (mode 0700)
// when it is missing, and returns it with the cleanup that closes it. A
// directory the filestore refuses (a symlink, not owned by the user, open
// to group or others) is a *refusal.Error of Class Config with
// ReasonStateDirUnusable, naming neither the path nor the operating-system
// error.
func Open(dir string) (*filestore.Store, func(), error) {
	if dir == "" {
		return nil, nil, &refusal.Error{Class: refusal.Config, Reason: ReasonStateDirUnusable, Detail: "no state directory given"}
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, nil, &refusal.Error{Class: refusal.Config, Reason: ReasonStateDirUnusable, Detail: "state directory cannot be created"}
	}
	s, err := filestore.Open(filepath.Join(dir, StoreSubdir))
	if err != nil {
		detail := "store directory refused"
		var de *filestore.DirError
		if errors.As(err, &de) {
			detail += ": " + string(de.Reason)
		}
		return nil, nil, &refusal.Error{Class: refusal.Config, Reason: ReasonStateDirUnusable, Detail: detail}
	}
	return s, func() { _ = s.Close() }, nil
}

// Set provides the filestore as the Locker, ApprovalStore and AuditLog of
// a deployment (the token store is chosen separately).
var Set = wire.NewSet(
	Open,
	wire.Bind(new(ports.Locker), new(*filestore.Store)),
	wire.Bind(new(ports.ApprovalStore), new(*filestore.Store)),
	wire.Bind(new(ports.AuditLog), new(*filestore.Store)),
)
