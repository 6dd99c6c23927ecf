// tests/errors/error_matchers.hpp — the matcher every bad-input test uses: the exception's
// message contains each given part (op name, shapes, dtypes). Used with Catch2 v2's
// REQUIRE_THROWS_MATCHES(expr, Type, has_message({...})), which also checks the type.
#pragma once
#include <catch2/catch.hpp>  // Catch::MatcherBase

#include <exception>         // std::exception
#include <initializer_list>  // std::initializer_list
#include <string>            // std::string
#include <vector>            // std::vector

namespace terr {

/// Matches an exception whose `what()` contains every part; on failure it shows the message.
class MessageContains : public Catch::MatcherBase<std::exception> {
 public:
  explicit MessageContains(std::vector<std::string> parts) : parts_(std::move(parts)) {}
  bool match(const std::exception& e) const override {
    got_ = e.what();
    for (const auto& p : parts_)
      if (got_.find(p) == std::string::npos) return false;
    return true;
  }
  std::string describe() const override {
    std::string s = "has a message containing";
    for (const auto& p : parts_) s += " \"" + p + "\"";
    return s + " (message: \"" + got_ + "\")";
  }

 private:
  std::vector<std::string> parts_;
  mutable std::string got_;
};

/// `has_message({"matmul", "[2, 3]"})`: the message contains each part.
inline MessageContains has_message(std::initializer_list<std::string> parts) { return MessageContains(parts); }

}  // namespace terr
