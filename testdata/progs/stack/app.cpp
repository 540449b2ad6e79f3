// app.cpp: app.c built as a C++ program (internal/mpitest/stack_test.go).
#include "app.c"
