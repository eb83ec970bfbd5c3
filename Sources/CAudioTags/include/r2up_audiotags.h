#ifndef R2UP_AUDIOTAGS_H
#define R2UP_AUDIOTAGS_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/// What TagLib found in one file. Strings are UTF-8, malloc'd, NULL when absent;
/// numbers are 0 when absent. Free with r2up_audiotags_free.
typedef struct r2up_audiotags {
    char *title;
    char *artist;
    char *albumartist;
    char *album;
    char *date;
    char *genre;
    int track;
    int disc;
    /// 1 when the compilation flag is set (ID3v2 TCMP, MP4 cpil, Vorbis COMPILATION).
    int compilation;
    int has_tags;
    int has_audio;
    int duration_ms;
    int bitrate_kbps;
    int sample_rate;
    int channels;
} r2up_audiotags;

/// Reads the tags and audio properties of the file at path (the type comes from its
/// extension, then its content). Returns 0 when TagLib opened the file, 1 when it could not
/// (unknown type, unreadable, broken). Not thread-safe: TagLib 1.13 shares caches without
/// locks, so callers serialise every call.
int r2up_audiotags_read(const char *path, r2up_audiotags *out);

/// The picture embedded in the file at path: its front cover, else the first one (ID3v2 APIC in
/// MP3, WAV and AIFF; FLAC and Vorbis/Opus pictures; MP4 covr). On 0, *data holds *size
/// malloc'd bytes (free them with free); 1 when there is none, it is over max_size bytes, or
/// TagLib could not open the file. Not thread-safe (as r2up_audiotags_read).
int r2up_audiotags_picture(const char *path, size_t max_size, unsigned char **data, size_t *size);

/// Frees the strings of a filled struct and zeroes it.
void r2up_audiotags_free(r2up_audiotags *tags);

#ifdef __cplusplus
}
#endif

#endif
