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
#include <aifffile.h>
#include <attachedpictureframe.h>
#include <flacfile.h>
#include <flacpicture.h>
#include <id3v2tag.h>
#include <mp4coverart.h>
#include <mp4file.h>
#include <mp4tag.h>
#include <mpegfile.h>
#include <wavfile.h>
#include <xiphcomment.h>

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
        out->genre = copyString(first(map, "GENRE"));
        out->compilation = leadingNumber(first(map, "COMPILATION")) > 0 ? 1 : 0;
        out->track = leadingNumber(first(map, "TRACKNUMBER"));
        out->disc = leadingNumber(first(map, "DISCNUMBER"));
        out->has_tags = (out->title || out->artist || out->albumartist || out->album || out->date
                         || out->genre || out->track || out->disc || out->compilation) ? 1 : 0;
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
    std::free(tags->genre);
    std::memset(tags, 0, sizeof *tags);
}

namespace {

// The front cover among an ID3v2 tag's APIC frames, else the first.
TagLib::ByteVector id3Picture(TagLib::ID3v2::Tag *tag) {
    if (tag == nullptr) return TagLib::ByteVector();
    TagLib::ByteVector found;
    for (TagLib::ID3v2::Frame *frame : tag->frameList("APIC")) {
        auto *picture = dynamic_cast<TagLib::ID3v2::AttachedPictureFrame *>(frame);
        if (picture == nullptr) continue;
        if (picture->type() == TagLib::ID3v2::AttachedPictureFrame::FrontCover) return picture->picture();
        if (found.isEmpty()) found = picture->picture();
    }
    return found;
}

TagLib::ByteVector flacPicture(const TagLib::List<TagLib::FLAC::Picture *> &pictures) {
    TagLib::ByteVector found;
    for (TagLib::FLAC::Picture *picture : pictures) {
        if (picture->type() == TagLib::FLAC::Picture::FrontCover) return picture->data();
        if (found.isEmpty()) found = picture->data();
    }
    return found;
}

TagLib::ByteVector picture(TagLib::FileRef &ref) {
    TagLib::File *file = ref.file();
    if (auto *mpeg = dynamic_cast<TagLib::MPEG::File *>(file)) return id3Picture(mpeg->ID3v2Tag(false));
    if (auto *wav = dynamic_cast<TagLib::RIFF::WAV::File *>(file)) return wav->hasID3v2Tag() ? id3Picture(wav->ID3v2Tag()) : TagLib::ByteVector();
    if (auto *aiff = dynamic_cast<TagLib::RIFF::AIFF::File *>(file)) return id3Picture(aiff->tag());
    if (auto *flac = dynamic_cast<TagLib::FLAC::File *>(file)) return flacPicture(flac->pictureList());
    if (auto *mp4 = dynamic_cast<TagLib::MP4::File *>(file)) {
        TagLib::MP4::Tag *tag = mp4->tag();
        if (tag == nullptr || !tag->contains("covr")) return TagLib::ByteVector();
        const TagLib::MP4::CoverArtList covers = tag->item("covr").toCoverArtList();
        return covers.isEmpty() ? TagLib::ByteVector() : covers.front().data();
    }
    if (auto *xiph = dynamic_cast<TagLib::Ogg::XiphComment *>(ref.tag())) return flacPicture(xiph->pictureList());
    return TagLib::ByteVector();
}

} // namespace

extern "C" int r2up_audiotags_picture(const char *path, size_t max_size, unsigned char **data, size_t *size) {
    if (path == nullptr || data == nullptr || size == nullptr) return 1;
    *data = nullptr;
    *size = 0;
    try {
        TagLib::FileRef ref(path, false);
        if (ref.isNull() || ref.file() == nullptr || !ref.file()->isValid()) return 1;
        const TagLib::ByteVector bytes = picture(ref);
        if (bytes.isEmpty() || bytes.size() > max_size) return 1;
        auto *copy = static_cast<unsigned char *>(std::malloc(bytes.size()));
        if (copy == nullptr) return 1;
        std::memcpy(copy, bytes.data(), bytes.size());
        *data = copy;
        *size = bytes.size();
        return 0;
    } catch (...) {
        return 1;
    }
}
