// Icons: lucide's drawings (the `lucide` package: plain data, no framework), drawn by one small
// component. Import icons from here so the set stays one list and the bundle keeps only these.
import { h } from 'preact';

export {
  Activity,
  ArrowDown,
  ArrowUp,
  ArrowUpRight,
  Bot,
  Braces,
  CalendarClock,
  Check,
  ChevronRight,
  CircleAlert,
  CircleCheck,
  Clock,
  CodeXml,
  Columns3,
  Copy,
  CornerDownLeft,
  Database,
  DatabaseBackup,
  Download,
  Eye,
  EyeOff,
  FileText,
  FileUp,
  Fingerprint,
  Folder,
  FolderOpen,
  GitBranch,
  HardDrive,
  HeartPulse,
  KeyRound,
  LayoutDashboard,
  Link,
  Lock,
  LogIn,
  LogOut,
  Mail,
  Menu,
  Monitor,
  Moon,
  PanelLeftClose,
  PanelLeftOpen,
  Pencil,
  Play,
  Plug,
  Plus,
  RefreshCw,
  RotateCcw,
  Save,
  Rows3,
  ScrollText,
  Search,
  Send,
  Settings,
  ShieldCheck,
  Sparkles,
  SquareFunction,
  SquareTerminal,
  Stethoscope,
  Sun,
  Table2,
  Trash2,
  TriangleAlert,
  Upload,
  UserPlus,
  Users,
  Webhook,
  X,
  Zap,
} from 'lucide';

/** An icon's drawing as lucide gives it: [tag, attributes] pairs. */
export type IconNode = [tag: string, attrs: Record<string, string | number | undefined>][];

/** Draws an icon at the text's size and colour; decorative (aria-hidden) unless given a label. */
export function Icon({ icon, label, class: cls }: { icon: IconNode; label?: string; class?: string }) {
  return (
    <svg
      class={cls ? `icon ${cls}` : 'icon'}
      viewBox="0 0 24 24"
      fill="none"
      stroke="currentColor"
      stroke-width={2}
      stroke-linecap="round"
      stroke-linejoin="round"
      aria-hidden={label ? undefined : 'true'}
      role={label ? 'img' : undefined}
      aria-label={label}
    >
      {icon.map(([tag, attrs], i) => h(tag, { key: i, ...attrs }))}
    </svg>
  );
}
