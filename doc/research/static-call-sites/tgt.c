/* static-call target for the benchmark (separate TU: no inlining / IPA) */
long tgt3(long a, long b, long c) { return a + b + c; }
long (*volatile tgt3_ptr)(long, long, long) = tgt3;
