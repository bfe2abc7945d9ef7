module github.com/mcpward/mcpward/core

go 1.26

require github.com/mcpward/mcpward/ports v0.0.0

require github.com/stretchr/testify v1.11.1 // indirect

replace github.com/mcpward/mcpward/ports => ../ports
