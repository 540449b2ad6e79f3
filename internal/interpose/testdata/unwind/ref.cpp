// ref.cpp: C++ frames checked against backtrace() (probe.c): a virtual
// method, a template, a lambda through std::function, a constructor, and a
// destructor run while an exception unwinds the stack.
#include <functional>
#include <stdexcept>
#include <cstdio>

#include "probe.h"

volatile int sink;

namespace halo {
struct Exchanger {
	virtual ~Exchanger() {}
	virtual int exchange(int x) = 0;
};

template <typename T> __attribute__((noinline)) int pack(T v)
{
	std::function<int(int)> f = [v](int y) __attribute__((noinline)) { return probe("lambda in a template", nullptr) + y + (int)v; };
	int r = f(1);
	sink += r;
	return r;
}

struct Grid : Exchanger {
	__attribute__((noinline)) int exchange(int x) override
	{
		int r = pack<double>(x) + pack<long>(x);
		sink += r;
		return r;
	}
};

struct Guard {
	__attribute__((noinline)) Guard() { sink += probe("constructor", nullptr); }
	__attribute__((noinline)) ~Guard() { sink += probe("destructor during unwinding", nullptr); }
};

__attribute__((noinline)) void fail(int x)
{
	Guard g;
	if (x > 0)
		throw std::runtime_error("unwind");
	sink += x;
}
} // namespace halo

int main()
{
	halo::Grid g;
	halo::Exchanger *e = &g;
	sink += e->exchange(3);
	try {
		halo::fail(1);
	} catch (const std::exception &) {
		sink += probe("catch", nullptr);
	}
	return probe_summary();
}
