# The seeds' experiments in user space: seed 000 (push; popf vs test; jz;
# stc as inline natives), seed 002 (lock/unlock: direct calls, an ops
# table, static calls, an inline native unlock), seed 004 (unlock through
# an ordinary site, a callee-save thunk, a hand-written callee-save fast
# path, 1-4 threads). Run them all, with callgrind when valgrind is there:
#   cmake --build build --target bench_seeds
find_package(Threads REQUIRED)
# gcc's identical code folding would turn twin targets into one
set(SY_SEED_FLAGS ${SY_WARN} -O2 $<$<C_COMPILER_ID:GNU>:-fno-ipa-icf>)
foreach(seed seed000_popf seed002_pvlock seed004_unlock)
  add_executable(${seed} EXCLUDE_FROM_ALL ${seed}.c)
  target_link_libraries(${seed} PRIVATE switchyard Threads::Threads m)
  target_compile_options(${seed} PRIVATE ${SY_SEED_FLAGS})
endforeach()
target_sources(seed002_pvlock PRIVATE seed_locks.c)

add_custom_target(bench_seeds
  COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/run_seeds.sh
          $<TARGET_FILE:seed000_popf> $<TARGET_FILE:seed002_pvlock>
          $<TARGET_FILE:seed004_unlock>
  DEPENDS seed000_popf seed002_pvlock seed004_unlock
  USES_TERMINAL)

# Not a benchmark: what an rseq abort does to inline natives (exits 1 when
# it sees it). cmake --build build --target native_abort && build/bench/native_abort
add_executable(native_abort EXCLUDE_FROM_ALL native_abort.c)
target_link_libraries(native_abort PRIVATE switchyard Threads::Threads)
target_compile_options(native_abort PRIVATE ${SY_WARN} -O2 -fno-omit-frame-pointer)
