// zlib for its CRC-32 (crc32_z), the integrity check servers verify at a fraction of MD5's cost.
#include <zlib.h>
