package profile

const sysPreadv2 = 327
