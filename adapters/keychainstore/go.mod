module github.com/mcpward/mcpward/adapters/keychainstore

go 1.26

require (
	github.com/mcpward/mcpward/core v0.0.0
	github.com/mcpward/mcpward/ports v0.0.0
)

replace (
	github.com/mcpward/mcpward/conformance => ../../conformance
	github.com/mcpward/mcpward/core => ../../core
	github.com/mcpward/mcpward/ports => ../../ports
)
