# Homebrew formula for nerdr (macOS, with the launchd agent). Not built on
# the project's machines (Debian, no macOS target): checked only with
# `ruby -c` where ruby exists, and its install paths compared with the
# .deb's by tests/suites/packages.rs. macOS has no systemd: `nerdr service
# install` writes the launchd agent (~/Library/LaunchAgents/com.nerdr.core.plist)
# for each user instead of the units.
class Nerdr < Formula
  desc "Runs coding agents in persistent terminal tabs under a per-user service"
  homepage "https://github.com/nerdr/nerdr"
  url "https://github.com/nerdr/nerdr/archive/refs/tags/v0.1.0.tar.gz"
  license any_of: ["MIT", "Apache-2.0"]
  head "https://github.com/nerdr/nerdr.git", branch: "main"

  depends_on "rust" => :build
  depends_on "git"

  def install
    system "cargo", "install", *std_cargo_args
    gen = buildpath/"gen"
    system "packaging/generate.sh", bin/"nerdr", gen
    bash_completion.install gen/"completions/nerdr"
    zsh_completion.install gen/"completions/_nerdr"
    fish_completion.install gen/"completions/nerdr.fish"
    man1.install Dir[gen/"man/*.1.gz"]
    doc.install "README.md", "SECURITY.md"
  end

  def caveats
    <<~EOS
      Start the core on demand under launchd (once per user):
        nerdr service install
    EOS
  end

  test do
    assert_match "nerdr #{version}", shell_output("#{bin}/nerdr --version")
  end
end
