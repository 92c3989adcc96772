# embed.cmake: write IN (a key file) as the C byte array al_default_keys_data.
# cmake -DIN=src/keys/redhat-release.asc -DOUT=al_default_keys.c -P embed.cmake
file(READ "${IN}" hex HEX)
string(LENGTH "${hex}" n2)
math(EXPR n "${n2} / 2")
string(REGEX REPLACE "([0-9a-f][0-9a-f])" "0x\\1, " bytes "${hex}")
# twelve bytes a line (CMake regexes have no {n} repetition)
set(twelve "")
foreach(i RANGE 11)
  string(APPEND twelve "0x.., ")
endforeach()
string(REGEX REPLACE "(${twelve})" "\\1\n\t" bytes "${bytes}")
get_filename_component(name "${IN}" NAME)
file(WRITE "${OUT}.tmp"
"/* Generated from src/keys/${name} by src/keys/embed.cmake: do not edit. */
#include <stddef.h>
#include <stdint.h>

extern const uint8_t al_default_keys_data[];
extern const size_t al_default_keys_len;

const uint8_t al_default_keys_data[] = {
\t${bytes}0x00};
const size_t al_default_keys_len = ${n};
")
file(RENAME "${OUT}.tmp" "${OUT}")
