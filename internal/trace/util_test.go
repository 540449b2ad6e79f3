package trace

import "os"

func ci() bool { return os.Getenv("CI") == "true" }
