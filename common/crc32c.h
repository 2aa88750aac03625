// CRC-32C (Castagnoli), the checksum carried by every record and verified by readers.
// Uses the SSE4.2 instruction when the CPU has it, a table otherwise; both give the
// same values. Thread-safe, no allocation.
#pragma once

#include <cstddef>
#include <cstdint>

namespace rpmp {

// Extends `crc` (0 to start) over `len` bytes at `data`.
uint32_t Crc32c(const void* data, size_t len, uint32_t crc = 0);

}  // namespace rpmp
