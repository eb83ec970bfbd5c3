// A C face over TagLib's C++ API: the C API of TagLib 1.13 has no album artist or disc
// number, and its strings live in a global list. PropertyMap gives every format's tags
// under one set of names (ALBUMARTIST from ID3v2 TPE2, MP4 aART, Vorbis ALBUMARTIST, ...).
#include "r2up_audiotags.h"

#include <cstdlib>
#include <cstring>
#include <new>

#include <fileref.h>
#include <tfile.h>
#include <tpropertymap.h>
#include <tstring.h>
#include <audioproperties.h>

namespace {

char *copyString(const TagLib::String &value) {
    if (value.isEmpty()) return nullptr;
    const std::string utf8 = value.to8Bit(true);
    char *copy = static_cast<char *>(std::malloc(utf8.size() + 1));
    if (copy == nullptr) return nullptr;
    std::memcpy(copy, utf8.data(), utf8.size());
    copy[utf8.size()] = '\0';
    return copy;
}

TagLib::String first(const TagLib::PropertyMap &map, const char *name) {
    auto found = map.find(name);
    if (found == map.end() || found->second.isEmpty()) return TagLib::String();
    return found->second.front().stripWhiteSpace();
}

// "3", "03" or "3/12": the leading number; 0 when there is none or it is absurd.
int leadingNumber(const TagLib::String &text) {
    const std::string s = text.to8Bit(true);
    long value = 0;
    size_t i = 0;
    while (i < s.size() && s[i] == ' ') i++;
    size_t start = i;
    while (i < s.size() && s[i] >= '0' && s[i] <= '9' && i - start < 6) {
        value = value * 10 + (s[i] - '0');
        i++;
    }
    return (i == start || value > 99999) ? 0 : static_cast<int>(value);
}

} // namespace

extern "C" int r2up_audiotags_read(const char *path, r2up_audiotags *out) {
    if (out == nullptr) return 1;
    std::memset(out, 0, sizeof *out);
    if (path == nullptr) return 1;
    try {
        TagLib::FileRef ref(path, true, TagLib::AudioProperties::Average);
        if (ref.isNull() || ref.file() == nullptr || !ref.file()->isValid()) return 1;
        const TagLib::PropertyMap map = ref.file()->properties();
        out->title = copyString(first(map, "TITLE"));
        out->artist = copyString(first(map, "ARTIST"));
        out->albumartist = copyString(first(map, "ALBUMARTIST"));
        out->album = copyString(first(map, "ALBUM"));
        out->date = copyString(first(map, "DATE"));
        out->track = leadingNumber(first(map, "TRACKNUMBER"));
        out->disc = leadingNumber(first(map, "DISCNUMBER"));
        out->has_tags = (out->title || out->artist || out->albumartist || out->album || out->date
                         || out->track || out->disc) ? 1 : 0;
        if (const TagLib::AudioProperties *audio = ref.audioProperties()) {
            out->has_audio = 1;
            out->duration_ms = audio->lengthInMilliseconds();
            out->bitrate_kbps = audio->bitrate();
            out->sample_rate = audio->sampleRate();
            out->channels = audio->channels();
        }
        return 0;
    } catch (...) {
        r2up_audiotags_free(out);
        return 1;
    }
}

extern "C" void r2up_audiotags_free(r2up_audiotags *tags) {
    if (tags == nullptr) return;
    std::free(tags->title);
    std::free(tags->artist);
    std::free(tags->albumartist);
    std::free(tags->album);
    std::free(tags->date);
    std::memset(tags, 0, sizeof *tags);
}
