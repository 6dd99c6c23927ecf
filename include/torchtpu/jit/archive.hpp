// torchtpu/jit/archive.hpp — what a file handed to `jit::load` is, judged from its bytes
// (no libtorch): a TorchScript archive, a torch.save archive (state dict, pickled module,
// tensor, other object), a legacy torch.save pickle, another zip, or not a zip at all; and
// whether every stored zip entry still matches its CRC-32 (a damaged file).
#pragma once
#include <algorithm>    // std::min
#include <array>        // std::array
#include <cstddef>      // size_t, ptrdiff_t
#include <cstdint>      // uint32_t, uint64_t
#include <cstdio>       // std::snprintf
#include <fstream>      // std::ifstream
#include <string>       // std::string
#include <string_view>  // std::string_view
#include <vector>       // std::vector

namespace torchtpu::jit {

/// The kind of a model file and what to do about it, from `inspect_archive`.
struct ArchiveInfo {
  /// What the file is.
  enum class Kind {
    Missing,        ///< cannot be opened
    NotZip,         ///< not a zip archive (and not a pickle)
    LegacyPickle,   ///< a pre-1.6 torch.save file (`_use_new_zipfile_serialization=False`) or a plain pickle
    TorchScript,    ///< `<name>/data.pkl`, `<name>/code/`, `<name>/constants.pkl`: torch.jit.save
    StateDict,      ///< torch.save archive whose data.pkl starts with `collections.OrderedDict`
    PickledModule,  ///< torch.save archive of an `nn.Module` object (`torch.save(model)`)
    TorchSave,      ///< another torch.save archive (a tensor, a dict, ...)
    OtherZip,       ///< a zip archive of another kind
  };
  /// The kind.
  Kind kind = Kind::Missing;
  /// One phrase for error messages: "a state dict (torch.save(model.state_dict()))".
  std::string what;
  /// How to make a loadable file, for error messages.
  std::string fix;
  /// Non-empty when a stored entry fails its CRC-32 check or the zip structure is cut short.
  std::string damage;
  /// The zip entry names (empty when not a zip).
  std::vector<std::string> entries;
  /// Top-level class named by data.pkl's first GLOBAL opcode (`collections.OrderedDict`,
  /// `__main__.Net`), for torch.save archives.
  std::string pickled_class;
};

namespace detail {

/// CRC-32 (zip's polynomial 0xEDB88320) of `n` bytes continuing from `crc`.
inline uint32_t crc32(uint32_t crc, const unsigned char* p, size_t n) {
  static const std::array<uint32_t, 256> table = [] {
    std::array<uint32_t, 256> t{};
    for (uint32_t i = 0; i < 256; ++i) {
      uint32_t c = i;
      for (int k = 0; k < 8; ++k) c = (c & 1) ? 0xEDB88320u ^ (c >> 1) : c >> 1;
      t[i] = c;
    }
    return t;
  }();
  crc = ~crc;
  for (size_t i = 0; i < n; ++i) crc = table[(crc ^ p[i]) & 0xFF] ^ (crc >> 8);
  return ~crc;
}

inline uint64_t le(const unsigned char* p, int bytes) {
  uint64_t v = 0;
  for (int i = bytes - 1; i >= 0; --i) v = (v << 8) | p[i];
  return v;
}

/// One central-directory entry.
struct ZipEntry {
  std::string name;
  uint32_t crc = 0;
  uint16_t method = 0;
  uint64_t csize = 0, usize = 0, offset = 0;
};

/// Reads the central directory (zip64 too). Returns false (with `why`) when the file is not
/// a zip or its directory cannot be read.
inline bool read_zip_directory(std::ifstream& f, uint64_t file_size, std::vector<ZipEntry>& out, std::string& why) {
  if (file_size < 22) { why = "too short for a zip"; return false; }
  const uint64_t tail_len = std::min<uint64_t>(file_size, 65535 + 22);
  std::vector<unsigned char> tail(tail_len);
  f.seekg(std::streamoff(file_size - tail_len));
  if (!f.read(reinterpret_cast<char*>(tail.data()), std::streamsize(tail_len))) { why = "read error"; return false; }
  int64_t eocd = -1;
  for (int64_t i = int64_t(tail_len) - 22; i >= 0; --i)
    if (le(&tail[size_t(i)], 4) == 0x06054b50) { eocd = i; break; }
  if (eocd < 0) { why = "no end-of-central-directory record"; return false; }
  const unsigned char* e = &tail[size_t(eocd)];
  uint64_t count = le(e + 10, 2), cd_size = le(e + 12, 4), cd_off = le(e + 16, 4);
  if (count == 0xFFFF || cd_size == 0xFFFFFFFFu || cd_off == 0xFFFFFFFFu) {  // zip64
    if (eocd < 20 || le(e - 20, 4) != 0x07064b50) { why = "zip64 locator missing"; return false; }
    const uint64_t z64 = le(e - 20 + 8, 8);
    unsigned char r[56];
    f.seekg(std::streamoff(z64));
    if (z64 + 56 > file_size || !f.read(reinterpret_cast<char*>(r), 56) || le(r, 4) != 0x06064b50) {
      why = "zip64 end record unreadable";
      return false;
    }
    count = le(r + 32, 8);
    cd_size = le(r + 40, 8);
    cd_off = le(r + 48, 8);
  }
  if (cd_off + cd_size > file_size || cd_size > (uint64_t(1) << 31)) { why = "central directory out of bounds"; return false; }
  std::vector<unsigned char> cd(static_cast<size_t>(cd_size));
  f.seekg(std::streamoff(cd_off));
  if (!f.read(reinterpret_cast<char*>(cd.data()), std::streamsize(cd_size))) { why = "central directory unreadable"; return false; }
  size_t p = 0;
  for (uint64_t i = 0; i < count; ++i) {
    if (p + 46 > cd.size() || le(&cd[p], 4) != 0x02014b50) { why = "central directory entry " + std::to_string(i) + " is damaged"; return false; }
    const unsigned char* h = &cd[p];
    ZipEntry z;
    z.method = uint16_t(le(h + 10, 2));
    z.crc = uint32_t(le(h + 16, 4));
    z.csize = le(h + 20, 4);
    z.usize = le(h + 24, 4);
    const size_t nlen = size_t(le(h + 28, 2)), xlen = size_t(le(h + 30, 2)), clen = size_t(le(h + 32, 2));
    z.offset = le(h + 42, 4);
    if (p + 46 + nlen + xlen + clen > cd.size()) { why = "central directory entry " + std::to_string(i) + " is damaged"; return false; }
    z.name.assign(reinterpret_cast<const char*>(h + 46), nlen);
    for (size_t x = 0; x + 4 <= xlen;) {  // zip64 extra field: the 0xFFFFFFFF fields, in order
      const unsigned char* ex = h + 46 + nlen + x;
      const size_t id = size_t(le(ex, 2)), sz = size_t(le(ex + 2, 2));
      if (x + 4 + sz > xlen) break;
      if (id == 1) {
        size_t q = 4;
        if (z.usize == 0xFFFFFFFFu && q + 8 <= 4 + sz) { z.usize = le(ex + q, 8); q += 8; }
        if (z.csize == 0xFFFFFFFFu && q + 8 <= 4 + sz) { z.csize = le(ex + q, 8); q += 8; }
        if (z.offset == 0xFFFFFFFFu && q + 8 <= 4 + sz) { z.offset = le(ex + q, 8); }
      }
      x += 4 + sz;
    }
    out.push_back(std::move(z));
    p += 46 + nlen + xlen + clen;
  }
  return true;
}

/// Checks a stored (uncompressed) entry's CRC-32; reads its bytes into `keep` when asked.
/// Returns a description of the damage, or "".
inline std::string check_entry(std::ifstream& f, uint64_t file_size, const ZipEntry& z, std::vector<unsigned char>* keep) {
  unsigned char h[30];
  f.clear();
  f.seekg(std::streamoff(z.offset));
  if (z.offset + 30 > file_size || !f.read(reinterpret_cast<char*>(h), 30) || le(h, 4) != 0x04034b50)
    return "entry '" + z.name + "': local header missing or damaged";
  const uint64_t data = z.offset + 30 + le(h + 26, 2) + le(h + 28, 2);
  if (data + z.csize > file_size) return "entry '" + z.name + "' is cut short (the file is truncated)";
  if (z.method != 0) return "";  // compressed: not checked here (torch writes stored entries)
  f.seekg(std::streamoff(data));
  std::vector<unsigned char> buf(size_t(std::min<uint64_t>(z.csize, uint64_t(1) << 20)));
  uint32_t crc = 0;
  for (uint64_t left = z.csize; left > 0;) {
    const size_t n = size_t(std::min<uint64_t>(left, buf.size()));
    if (!f.read(reinterpret_cast<char*>(buf.data()), std::streamsize(n))) return "entry '" + z.name + "' is unreadable";
    crc = crc32(crc, buf.data(), n);
    if (keep) keep->insert(keep->end(), buf.begin(), buf.begin() + std::ptrdiff_t(n));
    left -= n;
  }
  if (crc != z.crc) {
    char m[64];
    std::snprintf(m, sizeof m, " (stored %08x, computed %08x)", z.crc, crc);
    return "entry '" + z.name + "' fails its CRC-32 check" + m;
  }
  return "";
}

/// `module.Name` of the first GLOBAL opcode of a protocol-2 pickle ("" if it starts otherwise),
/// and whether the pickle mentions `torch.nn.modules` anywhere.
inline std::string first_global(const std::vector<unsigned char>& pkl) {
  size_t p = 0;
  if (pkl.size() >= 2 && pkl[0] == 0x80) p = 2;  // PROTO n
  if (p >= pkl.size() || pkl[p] != 'c') return "";
  const std::string_view s(reinterpret_cast<const char*>(pkl.data()) + p + 1, pkl.size() - p - 1);
  const size_t a = s.find('\n');
  if (a == std::string_view::npos || a > 200) return "";
  const size_t b = s.find('\n', a + 1);
  if (b == std::string_view::npos || b - a > 200) return "";
  return std::string(s.substr(0, a)) + "." + std::string(s.substr(a + 1, b - a - 1));
}

inline const char* trace_fix() {
  return "torch.jit.freeze(torch.jit.trace(model.eval(), example_input)).save('model.pt')";
}

}  // namespace detail

/// Inspects `path` without libtorch: its kind (ArchiveInfo::Kind), a description and a fix for
/// error messages, and damage (an entry failing its CRC-32, a truncated archive). Reads every
/// stored entry once. **Errors:** none (an unreadable file is Kind::Missing).
inline ArchiveInfo inspect_archive(const std::string& path) {
  ArchiveInfo info;
  std::ifstream f(path, std::ios::binary);
  if (!f) {
    info.what = "a file that cannot be opened";
    return info;
  }
  f.seekg(0, std::ios::end);
  const uint64_t size = uint64_t(f.tellg());
  f.seekg(0);
  unsigned char head[4] = {0, 0, 0, 0};
  f.read(reinterpret_cast<char*>(head), 4);
  f.clear();
  const std::string make = std::string("to make a loadable file, in Python: ") + detail::trace_fix();
  if (!(head[0] == 'P' && head[1] == 'K')) {
    if (head[0] == 0x80 && head[1] >= 2 && head[1] <= 5) {
      info.kind = ArchiveInfo::Kind::LegacyPickle;
      info.what = head[1] == 2 && head[2] == 0x8a && head[3] == 0x0a
                      ? "a legacy torch.save file (the pre-1.6 pickle format, _use_new_zipfile_serialization=False)"
                      : "a Python pickle";
      info.fix = "load it in Python (obj = torch.load(path)), rebuild the model from it, then " +
                 std::string(detail::trace_fix());
    } else {
      info.kind = ArchiveInfo::Kind::NotZip;
      info.what = "not a zip archive (a TorchScript file is the zip archive torch.jit.save writes)";
      info.fix = make;
    }
    return info;
  }
  std::vector<detail::ZipEntry> zs;
  std::string why;
  if (!detail::read_zip_directory(f, size, zs, why)) {
    info.kind = ArchiveInfo::Kind::OtherZip;
    info.what = "a damaged zip archive";
    info.damage = why;
    info.fix = "save or download it again; " + make;
    return info;
  }
  for (const auto& z : zs) info.entries.push_back(z.name);
  // The archive's top-level folder: torch writes every entry under one `<name>/`.
  const size_t slash = zs.empty() ? std::string::npos : zs[0].name.find('/');
  const std::string prefix = slash == std::string::npos ? "" : zs[0].name.substr(0, slash + 1);
  bool code = false, constants = false;
  const detail::ZipEntry* data_pkl = nullptr;
  if (!prefix.empty())
    for (const auto& z : zs) {
      if (z.name == prefix + "data.pkl") data_pkl = &z;
      if (z.name == prefix + "constants.pkl") constants = true;
      if (z.name.rfind(prefix + "code/", 0) == 0) code = true;
    }
  std::vector<unsigned char> pkl;
  for (const auto& z : zs) {
    std::string d = detail::check_entry(f, size, z, &z == data_pkl ? &pkl : nullptr);
    if (!d.empty() && info.damage.empty()) info.damage = d;
  }
  if (data_pkl && (code || constants)) {
    info.kind = ArchiveInfo::Kind::TorchScript;
    info.what = "a TorchScript archive";
    info.fix = "save it again with torch.jit.save (libtorch 1.13 reads files from torch <= 1.13); " + make;
    return info;
  }
  if (!data_pkl) {
    info.kind = ArchiveInfo::Kind::OtherZip;
    std::string names;
    for (size_t i = 0; i < zs.size() && i < 4; ++i) names += (i ? ", " : "") + zs[i].name;
    if (zs.size() > 4) names += ", ...";
    info.what = "a zip archive of another kind, neither TorchScript (<name>/data.pkl, <name>/code/, "
                "<name>/constants.pkl) nor torch.save (<name>/data.pkl, <name>/data/); its entries: " + names;
    info.fix = make;
    return info;
  }
  info.pickled_class = detail::first_global(pkl);
  const std::string_view text(reinterpret_cast<const char*>(pkl.data()), pkl.size());
  const bool mentions_modules = text.find("torch.nn.modules") != std::string_view::npos;
  if (info.pickled_class == "collections.OrderedDict") {
    info.kind = ArchiveInfo::Kind::StateDict;
    info.what = "a state dict (torch.save(model.state_dict())): weights without the model's code";
    info.fix = "in Python, build the model, model.load_state_dict(torch.load(path)), then " +
               std::string(detail::trace_fix());
  } else if (info.pickled_class.rfind("torch._utils.", 0) == 0 || info.pickled_class.rfind("torch.", 0) == 0) {
    info.kind = ArchiveInfo::Kind::TorchSave;
    info.what = "a torch.save archive holding a tensor (" + info.pickled_class + "), not a model";
    info.fix = make;
  } else if (!info.pickled_class.empty() && (mentions_modules || info.pickled_class.rfind("__main__.", 0) == 0)) {
    info.kind = ArchiveInfo::Kind::PickledModule;
    info.what = "a pickled nn.Module (torch.save(model)) of class " + info.pickled_class +
                ": Python objects that need the class's Python code";
    info.fix = "in Python, model = torch.load(path) (with the class importable), then " + std::string(detail::trace_fix());
  } else {
    info.kind = ArchiveInfo::Kind::TorchSave;
    info.what = info.pickled_class.empty()
                    ? std::string("a torch.save archive of a Python object (a dict or list, e.g. a training checkpoint)")
                    : "a torch.save archive of a pickled " + info.pickled_class;
    info.fix = "in Python, rebuild the model from it (torch.load(path)), then " + std::string(detail::trace_fix());
  }
  return info;
}

}  // namespace torchtpu::jit
