package iostreams

import "syscall"

const ioctlGetTermios = syscall.TCGETS
