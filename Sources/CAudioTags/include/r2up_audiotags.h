#ifndef R2UP_AUDIOTAGS_H
#define R2UP_AUDIOTAGS_H

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
    int track;
    int disc;
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

/// Frees the strings of a filled struct and zeroes it.
void r2up_audiotags_free(r2up_audiotags *tags);

#ifdef __cplusplus
}
#endif

#endif
